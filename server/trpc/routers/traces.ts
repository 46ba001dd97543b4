import { router } from '../init';

export const tracesRouter = router({});
