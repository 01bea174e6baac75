// Work-done progress from the server, shown where a cancel button fits. vscode-languageclient
// shows it in the status bar, where it cannot be cancelled; an export that runs longer than
// a moment gets a notification with Cancel instead, which kills the export's processes.

import * as vscode from 'vscode';
import {
  LanguageClient,
  WorkDoneProgress,
  WorkDoneProgressBegin,
  WorkDoneProgressCancelNotification,
  WorkDoneProgressCreateRequest,
  WorkDoneProgressReport,
} from 'vscode-languageclient/node';

/** Quick exports (most, once the workers are warm) never raise a notification. */
const NOTIFY_AFTER_MS = 1500;

export function showProgressWithCancel(client: LanguageClient): vscode.Disposable {
  return client.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
    let title = 'exportlens';
    let message: string | undefined;
    let reported = 0;
    let ui: vscode.Progress<{ message?: string; increment?: number }> | undefined;
    let finish: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const timer = setTimeout(() => {
      void vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title, cancellable: true },
        (progress, cancel) => {
          ui = progress;
          progress.report({ message, increment: reported });
          cancel.onCancellationRequested(() => client.sendNotification(WorkDoneProgressCancelNotification.type, { token }));
          return done;
        },
      );
    }, NOTIFY_AFTER_MS);
    const listener = client.onProgress(WorkDoneProgress.type, token, (value) => {
      if (value.kind === 'end') {
        clearTimeout(timer);
        listener.dispose();
        finish();
        return;
      }
      const step = value as WorkDoneProgressBegin | WorkDoneProgressReport;
      if (value.kind === 'begin') {
        title = (value as WorkDoneProgressBegin).title;
      }
      message = step.message ?? message;
      const increment = step.percentage !== undefined ? Math.max(step.percentage - reported, 0) : undefined;
      reported = step.percentage ?? reported;
      ui?.report({ message, increment });
    });
  });
}
