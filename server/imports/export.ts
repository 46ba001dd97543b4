import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import type { Bundle, BundlePage } from './schemas';

// PLACEHOLDER (M9 foundation): the export service is being written; see issue 22.
export async function exportPrompt(_ctx: ServiceContext, _input: OperationInput<'export_prompt'>): Promise<Bundle> {
  throw new Error('export_prompt is not implemented yet');
}

export async function exportOrganization(
  _ctx: ServiceContext,
  _input: OperationInput<'export_organization'>,
): Promise<BundlePage> {
  throw new Error('export_organization is not implemented yet');
}
