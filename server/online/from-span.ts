import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import type { DatasetCaseResult } from '../datasets/schemas';

// POST …/dataset/cases/from-span — being built (M11 helper "from-span").
export async function addCaseFromSpan(
  _ctx: ServiceContext,
  _input: OperationInput<'add_case_from_span'>,
): Promise<DatasetCaseResult> {
  throw new Error('add case from span: not built yet');
}
