import type { Route } from '../define';

export const datasetRoutes: Route[] = [];
