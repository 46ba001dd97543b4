import { and, eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { warnings } from '@/db/schema';

// The stored warning of a kind for a subject (open or resolved), or undefined when none was raised.
export async function warningRow(organizationId: string, kind: string, subjectId: string) {
  const db = await getDb();
  const [row] = await db
    .select()
    .from(warnings)
    .where(
      and(eq(warnings.organizationId, organizationId), eq(warnings.kind, kind), eq(warnings.subjectId, subjectId)),
    );
  return row;
}
