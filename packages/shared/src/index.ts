export * from './config';
export * from './errors';
export * from './logging';
export * from './db';
export * from './server';
export * from './openapi';
export * from './health';
export * from './secrets';
