// `npm run db:migrate`: applies the committed migrations to DATABASE_URL (or the embedded database).
import { getDatabase } from './client';

const database = await getDatabase();
console.log(`Migrations applied (${database.kind}).`);
await database.close();
