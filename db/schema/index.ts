export * from './accounts';
export * from './orgs';
export * from './platform';
