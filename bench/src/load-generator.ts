/**
 * The harness's handle on its load process (load-worker.ts): one long-lived child, forked under tsx, to which
 * each measurement's load spec is sent over IPC and whose result comes back the same way.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { LoadReply, LoadResult, LoadSpec } from './load-spec';

/** One long-lived load process (load-worker.ts); runs one spec at a time. */
export class LoadGenerator {
  private readonly child: ChildProcess;
  private next = 1;
  private readonly pending = new Map<number, { resolve: (r: LoadResult) => void; reject: (e: Error) => void }>();

  constructor() {
    this.child = fork(path.join(__dirname, 'load-worker.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (msg: LoadReply) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.ok) p.resolve(msg.result);
      else p.reject(new Error(msg.error));
    });
    this.child.on('exit', (code) => {
      for (const p of this.pending.values()) p.reject(new Error(`load generator exited (${code})`));
      this.pending.clear();
    });
  }

  run(spec: LoadSpec): Promise<LoadResult> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ id, spec });
    });
  }

  stop(): void {
    if (this.child.connected) this.child.disconnect();
  }
}
