import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import type { ImportReport } from './schemas';

// PLACEHOLDER (M9 foundation): the importer is being written; see issue 22.
export async function importPrompts(
  _ctx: ServiceContext,
  _input: OperationInput<'import_prompts'>,
): Promise<ImportReport> {
  throw new Error('import_prompts is not implemented yet');
}
