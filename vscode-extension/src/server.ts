// The language client's lifecycle: find the interpreter, check it has exportlens and torch,
// start `python -P -m exportlens.cli serve` from it, keep its settings and trust current, and
// restart it when the interpreter changes.

import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions, State, StaticFeature } from 'vscode-languageclient/node';

import { EXPORTS_NOTIFICATION, SUBMODULE_TREE_COMMAND, TRUST_NOTIFICATION } from './methods';
import { showProgressWithCancel } from './progress';
import {
  InstallOffer,
  Interpreter,
  PROBE,
  Probe,
  PythonEnvironments,
  installOffer,
  missing,
  parseProbe,
  resolveInterpreter,
  restrictedInterpreter,
  serverArgs,
  tooOld,
} from './python';
import { RestartQueue, RestartRequest, unchanged } from './restarts';
import { answerConfiguration, interpreterSetting, serverSettings } from './settings';
import { ExportCounts, ServerState } from './status';
import { TreeAnswer } from './tree';

const PROBE_TIMEOUT_MS = 30_000;

/** Tells the server this client shows submodule trees: it adds their CodeLens (server/trees.py). */
const SHOWS_TREES: StaticFeature = {
  fillClientCapabilities: (capabilities) => {
    capabilities.experimental = { ...(capabilities.experimental as object | undefined), exportlensSubmoduleTree: true };
  },
  initialize: () => undefined,
  getState: () => ({ kind: 'static' }),
  clear: () => undefined,
};

export interface Host {
  context: vscode.ExtensionContext;
  output: vscode.LogOutputChannel;
  trace: vscode.OutputChannel; // the LSP messages, when exportlens.trace.server asks for them
  environments: PythonEnvironments | undefined;
  setState(state: ServerState): void;
  // shows `exportlens.submoduleTree`'s answers, whoever runs it (the server's CodeLens included)
  trees: { run(args: unknown[], ask: () => Thenable<TreeAnswer | null | undefined>): Promise<unknown> };
}

/** The interpreter to start, or why none may start; and a settings problem to warn about. */
interface Choice {
  interpreter?: Interpreter;
  problem?: string;
  refused?: string;
}

export class Server implements vscode.Disposable {
  client: LanguageClient | undefined;
  interpreter: Interpreter | undefined;
  private warned = new Set<string>(); // interpreters already said to lack a package
  private readonly restarts = new RestartQueue((request) => this.restartNow(request));
  private subscriptions: vscode.Disposable[] = [];

  constructor(private readonly host: Host) {}

  /**
   * Starts the server, or stops and starts it again: one restart queued after the one under
   * way, which every request made meanwhile joins; skipped (unless forced) when the
   * interpreter it would start is the one still serving.
   */
  restart(reason: string, force = false): Promise<void> {
    return this.restarts.request(reason, force);
  }

  private async restartNow({ reasons, force }: RestartRequest): Promise<void> {
    const reason = reasons.join('; ');
    const chosen = await this.chooseInterpreter();
    if (!chosen.interpreter) {
      await this.stop();
      this.refuse(chosen.refused ?? 'no interpreter to run');
      return;
    }
    if (!force && unchanged(this.interpreter?.path, chosen.interpreter.path, this.client?.isRunning() ?? false)) {
      this.host.output.info(`${reason}: still Python ${chosen.interpreter.path}, from ${chosen.interpreter.source}; no restart`);
      return;
    }
    await this.stop();
    await this.start(reason, { interpreter: chosen.interpreter, problem: chosen.problem });
  }

  /** Restricted Mode found no interpreter outside the workspace: nothing starts, and the user is told why. */
  private refuse(reason: string): void {
    this.interpreter = undefined;
    this.host.output.warn(reason);
    this.host.setState({ kind: 'stopped', reason });
    void this.tell(`exportlens: ${reason}.`, `refused: ${reason}`);
  }

  /** The interpreter to run, from the settings of the first workspace folder (the server serves them all). */
  private async chooseInterpreter(): Promise<Choice> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const config = vscode.workspace.getConfiguration('exportlens', folder);
    const setting = interpreterSetting((k) => config.get(k));
    const interpreter = await resolveInterpreter(setting.value, this.host.environments, folder?.fsPath, folder);
    if (vscode.workspace.isTrusted) {
      return { interpreter, problem: setting.problem };
    }
    // Restricted Mode: an executable the workspace itself ships is workspace code
    const restricted = restrictedInterpreter(interpreter, this.folders(), process.env.PATH);
    if (restricted.note) {
      this.host.output.warn(restricted.note);
    }
    return { ...restricted, problem: setting.problem };
  }

  private folders(): string[] {
    return (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  }

  private async start(reason: string, chosen: { interpreter: Interpreter; problem?: string }): Promise<void> {
    const { output, setState } = this.host;
    setState({ kind: 'starting' });
    if (chosen.problem) {
      output.warn(chosen.problem);
      void vscode.window.showWarningMessage(`exportlens: ${chosen.problem}`);
    }
    const interpreter = chosen.interpreter;
    this.interpreter = interpreter;
    output.info(`starting (${reason}): Python ${interpreter.path}, from ${interpreter.source}`);

    const probe = await this.probe(interpreter);
    if (!probe) {
      return;
    }
    output.info(`Python ${probe.python} at ${probe.executable}: exportlens ${probe.exportlens}, torch ${probe.torch}`);

    const trusted = vscode.workspace.isTrusted;
    const serverOptions: ServerOptions = {
      command: interpreter.path,
      args: serverArgs(probe.python),
      // not the workspace: `python -m` puts the working folder first on sys.path (where -P
      // does not keep it off), and a workspace's `exportlens/` or `json.py` must never stand
      // in for ours
      options: { cwd: this.host.context.extensionPath },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: 'python' },
        { scheme: 'file', pattern: '**/pyproject.toml' },
      ],
      outputChannel: output,
      traceOutputChannel: this.host.trace, // exportlens.trace.server, which the client reads itself
      initializationOptions: { ...this.settings(), trusted },
      middleware: {
        executeCommand: (command, args, next) =>
          command === SUBMODULE_TREE_COMMAND ? this.host.trees.run(args, () => next(command, args)) : next(command, args),
        workspace: {
          // the `exportlens` section as the server reads it, at the scope (workspace folder) it asks for
          configuration: (params, token, next) =>
            answerConfiguration(
              params.items,
              (scope) => this.settings(scope === undefined ? undefined : vscode.Uri.parse(scope)),
              async (items) => next({ ...params, items }, token),
            ) as Promise<unknown[]>,
        },
      },
    };
    const client = new LanguageClient('exportlens', 'exportlens', serverOptions, clientOptions);
    client.registerFeature(SHOWS_TREES);
    this.client = client;
    this.subscriptions.push(
      client.onDidChangeState((e) => {
        if (e.newState === State.Stopped && this.client === client) {
          setState({ kind: 'stopped', reason: 'the server stopped; see the output for why' });
        }
      }),
    );
    try {
      await client.start();
    } catch (e) {
      setState({ kind: 'stopped', reason: `the server did not start: ${e instanceof Error ? e.message : String(e)}` });
      output.error(`the server did not start: ${e}`);
      return;
    }
    this.subscriptions.push(
      showProgressWithCancel(client),
      client.onNotification(EXPORTS_NOTIFICATION, (counts: ExportCounts) => {
        if (vscode.workspace.isTrusted) {
          setState({ kind: 'running', counts });
        }
      }),
    );
    setState(trusted ? { kind: 'running' } : { kind: 'restricted' });
  }

  async stop(): Promise<void> {
    this.subscriptions.forEach((d) => d.dispose());
    this.subscriptions = [];
    const client = this.client;
    this.client = undefined;
    if (client && client.state !== State.Stopped) {
      try {
        await client.stop(5000);
      } catch (e) {
        this.host.output.warn(`the server did not stop cleanly: ${e}`);
      }
    }
  }

  /** The settings the server reads, as it expects them: a folder's (`scope`), else the window's. */
  settings(scope?: vscode.Uri): Record<string, unknown> {
    const config = vscode.workspace.getConfiguration('exportlens', scope);
    return serverSettings((k) => config.get(k), this.interpreter?.path ?? 'python3');
  }

  /** Settings changed: the server reads them again, the window's and each folder's, and applies them without a restart. */
  sendSettings(): void {
    void this.client?.sendNotification('workspace/didChangeConfiguration', { settings: null });
  }

  /** The user trusted the workspace: exports begin, without a restart. */
  grantTrust(): void {
    void this.client?.sendNotification(TRUST_NOTIFICATION, { trusted: true });
    if (this.client) {
      this.host.setState({ kind: 'running' });
    }
  }

  /** The interpreter's packages, or undefined once the user was told what is wrong. */
  private async probe(interpreter: Interpreter): Promise<Probe | undefined> {
    const { output, setState } = this.host;
    const answer = await new Promise<{ stdout: string; error?: Error }>((resolve) =>
      execFile(interpreter.path, ['-c', PROBE], { cwd: this.host.context.extensionPath, timeout: PROBE_TIMEOUT_MS }, (error, stdout) =>
        resolve({ stdout: String(stdout), error: error ?? undefined }),
      ),
    );
    const probe = answer.error ? undefined : parseProbe(answer.stdout);
    if (!probe) {
      const why = answer.error ? answer.error.message.split('\n')[0] : 'it printed no answer';
      const reason = `${interpreter.path} (from ${interpreter.source}) could not be run: ${why}`;
      output.error(reason);
      setState({ kind: 'stopped', reason });
      void this.tell(`exportlens: ${reason}. Set exportlens.interpreter to a Python with exportlens and torch.`, interpreter.path);
      return undefined;
    }
    if (tooOld(probe.python)) {
      const reason = `${probe.executable} is Python ${probe.python}; exportlens needs 3.10 or newer`;
      output.error(reason);
      setState({ kind: 'stopped', reason });
      void this.tell(`exportlens: ${reason}.`, interpreter.path);
      return undefined;
    }
    const lacking = missing(probe);
    if (lacking.length) {
      const reason = `${lacking.join(' and ')} ${lacking.length > 1 ? 'are' : 'is'} not installed for ${probe.executable}`;
      const offer = installOffer({
        interpreter,
        probe,
        lacking,
        wheel: this.bundledWheel(),
        folders: this.folders(),
        trusted: vscode.workspace.isTrusted,
        extensionPath: this.host.context.extensionPath,
      });
      output.error(`${reason}${offer.why}${offer.command ? `; to install: ${offer.command}` : ''}`);
      setState({ kind: 'stopped', reason });
      const after = offer.command ? ' After installing, run “exportlens: Restart Server”.' : '';
      void this.tell(`exportlens: ${reason} (from ${interpreter.source})${offer.why}.${after}`, interpreter.path, offer);
      return undefined;
    }
    return probe;
  }

  /** Says it once per interpreter; the button runs the offer's command in a terminal the user sees. */
  private async tell(message: string, python: string, offer?: InstallOffer): Promise<void> {
    if (this.warned.has(python)) {
      return;
    }
    this.warned.add(python);
    const install = offer?.command && offer.button;
    const buttons = install ? [install, 'Show output'] : ['Show output'];
    const choice = await vscode.window.showErrorMessage(message, ...buttons);
    if (install && choice === install && offer?.command) {
      const terminal = vscode.window.createTerminal({ name: 'exportlens: install', cwd: offer.cwd });
      terminal.show();
      terminal.sendText(offer.command, true);
    } else if (choice === 'Show output') {
      this.host.output.show();
    }
  }

  private bundledWheel(): string | undefined {
    const dir = path.join(this.host.context.extensionPath, 'bundled');
    const wheel = fs.existsSync(dir) ? fs.readdirSync(dir).find((f) => f.endsWith('.whl')) : undefined;
    return wheel && path.join(dir, wheel);
  }

  dispose(): void {
    void this.stop();
  }
}
