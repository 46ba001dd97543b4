import { router } from '../init';

export const modelsRouter = router({});
