import type { Db } from '@/db/client';

// Who is calling: a person in the dashboard, or an OAuth client acting for a user.
export type Actor = {
  userId: string;
  clientId: string; // 'dashboard' for the browser session, else the OAuth client_id
  human: boolean;
};

export type ServiceContext = { db: Db; actor: Actor };
