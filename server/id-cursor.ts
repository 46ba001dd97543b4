import { invalidRequest } from './errors';
import { isId, type IdPrefix } from './ids';
import { decodeCursor } from './paging';

// Keyset cursors that hold one id: only an id of the listed kind, so a cursor from another list (a
// prompt list's sent to the organization list) is refused, not read as an empty last page.
export function idCursor(cursor: string, prefix: IdPrefix): string {
  const [value] = decodeCursor(cursor, 1);
  if (typeof value !== 'string' || !isId(prefix, value)) {
    throw invalidRequest('The cursor is not valid.', [{ path: 'cursor', message: 'Invalid cursor' }]);
  }
  return value;
}
