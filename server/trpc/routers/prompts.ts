import { router } from '../init';

export const promptsRouter = router({});
