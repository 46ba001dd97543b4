import type { Route } from '../define';

export const promptRoutes: Route[] = [];
