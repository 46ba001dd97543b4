import { router } from '../init';

export const datasetsRouter = router({});
