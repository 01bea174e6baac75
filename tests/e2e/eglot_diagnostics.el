;;; eglot_diagnostics.el --- headless Emacs: eglot starts `exportlens serve`, waits for a code  -*- lexical-binding: t -*-
;; Opens EXPORTLENS_EGLOT_FILE under EXPORTLENS_EGLOT_ROOT, starts eglot with the command in
;; EXPORTLENS_EGLOT_CMD (a JSON list), waits up to EXPORTLENS_EGLOT_TIMEOUT seconds for a
;; flymake diagnostic naming EXPORTLENS_EGLOT_CODE, writes what it saw as JSON to
;; EXPORTLENS_EGLOT_OUT, shuts the server down (shutdown, exit) and quits. The project is
;; found as eglot finds it (project.el: the VC root; tests/e2e/test_eglot.py makes one).
(require 'package)
(package-initialize)  ; Debian's elpa-eglot lives in /usr/share/emacs/site-lisp/elpa
(require 'eglot)
(require 'json)

(let* ((root (file-name-as-directory (getenv "EXPORTLENS_EGLOT_ROOT")))
       (cmd (append (json-read-from-string (getenv "EXPORTLENS_EGLOT_CMD")) nil))
       (code (getenv "EXPORTLENS_EGLOT_CODE"))
       (deadline (+ (float-time) (string-to-number (getenv "EXPORTLENS_EGLOT_TIMEOUT"))))
       (result '())
       (found nil))
  (setq eglot-sync-connect t)
  ;; the setup docs/server.md gives, with this interpreter's `exportlens serve`
  (add-to-list 'eglot-server-programs `((python-mode python-ts-mode) . ,cmd))
  (add-hook 'python-mode-hook #'eglot-ensure)
  (let ((default-directory root))
    (find-file (getenv "EXPORTLENS_EGLOT_FILE")))
  (run-hooks 'post-command-hook)  ; eglot-ensure connects after the first command: batch runs none
  (flymake-mode 1)
  (while (and (not found) (< (float-time) deadline))
    (accept-process-output nil 0.2)
    (flymake-start)
    (setq found (seq-some (lambda (d) (string-match-p (format "\\[%s\\]" code) (flymake-diagnostic-text d)))
                          (flymake-diagnostics))))
  (push (cons "found" (if found t :json-false)) result)
  (push (cons "diagnostics"
              (vconcat (mapcar (lambda (d)
                                 `(("line" . ,(line-number-at-pos (flymake-diagnostic-beg d)))
                                   ("type" . ,(symbol-name (flymake-diagnostic-type d)))
                                   ("text" . ,(flymake-diagnostic-text d))))
                               (flymake-diagnostics))))
        result)
  (let ((server (eglot-current-server)))
    (when server
      (eglot-shutdown server)
      (push (cons "exit" (process-exit-status (jsonrpc--process server))) result)))
  (with-temp-file (getenv "EXPORTLENS_EGLOT_OUT")
    (insert (json-encode result)))
  (kill-emacs 0))
