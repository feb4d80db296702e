import type { FastifyInstance } from 'fastify';
import type { SandboxState } from './server.ts';

export function registerExtras(_app: FastifyInstance, _state: SandboxState): void {}
