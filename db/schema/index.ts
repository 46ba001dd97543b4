export * from './accounts';
export * from './orgs';
export * from './platform';
export * from './prompts';
export * from './datasets';
export * from './traces';
export * from './evals';
export * from './keys';
