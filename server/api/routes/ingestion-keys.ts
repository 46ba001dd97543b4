import type { Route } from '../define';

export const ingestionKeyRoutes: Route[] = [];
