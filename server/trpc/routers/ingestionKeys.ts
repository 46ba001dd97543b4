import { router } from '../init';

export const ingestionKeysRouter = router({});
