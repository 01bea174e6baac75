// One queued restart. Changes come in bursts (the interpreter setting and the Python
// extension's selection change together; the Python extension fires once per folder): every
// request made before the queued restart begins joins it, and the restart itself decides
// whether anything it depends on changed. No `vscode` import: unit tests run it in plain node.

export interface RestartRequest {
  reasons: string[];
  force: boolean; // restart even if nothing changed (the Restart Server command)
}

export class RestartQueue {
  private last: Promise<void> = Promise.resolve();
  private queued: { request: RestartRequest; done: Promise<void> } | undefined;

  constructor(private readonly run: (request: RestartRequest) => Promise<void>) {}

  /** Queues a restart after the one under way, or joins the one already queued. */
  request(reason: string, force = false): Promise<void> {
    if (this.queued) {
      const { request } = this.queued;
      if (!request.reasons.includes(reason)) {
        request.reasons.push(reason);
      }
      request.force ||= force;
      return this.queued.done;
    }
    const request: RestartRequest = { reasons: [reason], force };
    const begin = () => {
      this.queued = undefined; // requests from now on queue the next restart
      return this.run(request);
    };
    const done = this.last.then(begin, begin);
    this.queued = { request, done };
    this.last = done.catch(() => undefined);
    return done;
  }
}

/** Whether a restart would start what runs already: the same interpreter, still answering. */
export function unchanged(running: string | undefined, wanted: string, alive: boolean): boolean {
  return alive && running === wanted;
}
