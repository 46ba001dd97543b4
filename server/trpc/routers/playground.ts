import { router } from '../init';

export const playgroundRouter = router({});
