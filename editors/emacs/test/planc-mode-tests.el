;;; planc-mode-tests.el --- ERT tests of planc-mode -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by run.sh beside this file:
;;   emacs --batch -Q -l planc-mode-tests.el -f ert-run-tests-batch-and-exit
;; Highlighting, syntax and indentation are tested on their own; the
;; language server tests drive the real `planc lsp' (on PATH) through
;; Eglot: diagnostics in Flymake, hover, going to a definition,
;; completion, rename and formatting.  Debian's elpa-* packages (Eglot
;; for Emacs 28, lsp-mode) are found where Debian installs them.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'package)
(add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa")
(package-initialize)

(defconst planc-test-directory
  (file-name-directory (or load-file-name buffer-file-name))
  "This file's directory, which holds the sample plans.")

(add-to-list 'load-path (expand-file-name ".." planc-test-directory))
(require 'planc-mode)
(require 'eglot)
(require 'flymake)
(require 'xref)

(setq eglot-sync-connect t
      eglot-autoshutdown nil
      eglot-events-buffer-size 0)

(defmacro planc-test-skip-unless-in-ci (condition)
  "Skip the test unless CONDITION holds; under CI (CI set) fail instead."
  `(if (getenv "CI") (should ,condition) (skip-unless ,condition)))

(defun planc-test-read (name)
  "The text of the sample file NAME beside this file."
  (with-temp-buffer
    (insert-file-contents (expand-file-name name planc-test-directory))
    (buffer-string)))

(defmacro planc-test-with-text (text &rest body)
  "Run BODY in a `planc-mode' buffer holding TEXT, highlighted."
  (declare (indent 1))
  `(with-temp-buffer
     (insert ,text)
     (planc-mode)
     (font-lock-ensure)
     (goto-char (point-min))
     ,@body))

(defun planc-test-faces-at (needle &optional occurrence offset)
  "The faces at the OCCURRENCE-th (1-based) NEEDLE, OFFSET chars into it."
  (goto-char (point-min))
  (search-forward needle nil nil (or occurrence 1))
  (let ((face (get-text-property (+ (match-beginning 0) (or offset 0)) 'face)))
    (if (listp face) face (list face))))

(defun planc-test-face-is (face needle &optional occurrence offset)
  "Whether FACE is among the faces at NEEDLE (see `planc-test-faces-at')."
  (memq face (planc-test-faces-at needle occurrence offset)))

;;;; Highlighting

(ert-deftest planc-mode-highlights-declarations-and-keywords ()
  (planc-test-with-text (planc-test-read "sample.plan")
    (should (planc-test-face-is 'font-lock-comment-face "# The Emacs" 1 2))
    (should (planc-test-face-is 'font-lock-keyword-face "plan emacs_test"))
    (should (planc-test-face-is 'font-lock-function-name-face "emacs_test"))
    (should (planc-test-face-is 'planc-field-keyword-face "goal"))
    (should (planc-test-face-is 'font-lock-keyword-face "param reviewer"))
    (should (planc-test-face-is 'font-lock-variable-name-face "reviewer: string"))
    (should (planc-test-face-is 'font-lock-type-face "string ="))
    (should (planc-test-face-is 'font-lock-type-face "int ="))
    (should (planc-test-face-is 'planc-number-face "2\n"))
    (should (planc-test-face-is 'font-lock-type-face "writer \"Writes"))
    (should (planc-test-face-is 'font-lock-function-name-face "write \"Write"))
    (should (planc-test-face-is 'font-lock-keyword-face "task outline"))
    (should (planc-test-face-is 'font-lock-function-name-face "outline \"Outline"))
    (should (planc-test-face-is 'font-lock-function-name-face "draft \"Draft"))
    (should (planc-test-face-is 'planc-field-keyword-face "assignee"))
    (should (planc-test-face-is 'font-lock-type-face "writer }"))
    (should (planc-test-face-is 'planc-number-face "3\n"))
    (should (planc-test-face-is 'planc-field-keyword-face "description"))))

(ert-deftest planc-mode-highlights-references ()
  (planc-test-with-text (planc-test-read "sample.plan")
    (should (planc-test-face-is 'planc-field-keyword-face "after outline"))
    (should (planc-test-face-is 'planc-reference-face "outline\n"))
    (should (planc-test-face-is 'planc-reference-face "draft, notes"))
    (should (planc-test-face-is 'planc-reference-face "notes\n"))
    (should (planc-test-face-is 'planc-reference-face "review }")))
  ;; A list over two lines, dotted paths, and the keyword that ends it.
  (planc-test-with-text "plan p {\n    task a \"A\" {\n        after x.y,\n            z\n        retry 1\n    }\n}\n"
    (should (planc-test-face-is 'planc-reference-face "x.y"))
    (should (planc-test-face-is 'planc-reference-face "x.y" 1 2))
    (should (planc-test-face-is 'planc-reference-face "z\n"))
    (should (planc-test-face-is 'planc-field-keyword-face "retry"))))

(ert-deftest planc-mode-highlights-strings ()
  (planc-test-with-text (planc-test-read "sample.plan")
    (should (planc-test-face-is 'font-lock-string-face "\"Exercise"))
    ;; An interpolation is a parameter inside the string.
    (should (planc-test-face-is 'planc-interpolation-face "reviewer}\""))
    (should (planc-test-face-is 'font-lock-string-face "reviewer}\""))
    (should (planc-test-face-is 'planc-interpolation-face "rounds}"))
    ;; A """ string holds `"' and keywords as text; `{{' is an escape,
    ;; not an interpolation.
    (should (planc-test-face-is 'font-lock-string-face "Check the"))
    (should (planc-test-face-is 'font-lock-string-face "draft\" {{"))
    (should-not (planc-test-face-is 'planc-reference-face "draft\" {{"))
    (should (planc-test-face-is 'planc-escape-face "{{twice"))
    (should-not (planc-test-face-is 'planc-interpolation-face "twice"))
    (should (planc-test-face-is 'planc-escape-face "\\n"))
    ;; Code again after the string closes.
    (should (planc-test-face-is 'font-lock-keyword-face "task publish"))
    (should-not (planc-test-face-is 'font-lock-string-face "task publish")))
  (planc-test-with-text "plan p {\n    title \"a \\q {{{x}}} \\u{1F600} after b # no\"\n}\n"
    (should (planc-test-face-is 'font-lock-warning-face "\\q"))
    (should (planc-test-face-is 'planc-interpolation-face "x}}}"))
    (should (planc-test-face-is 'planc-escape-face "\\u{1F600}" 1 8))
    (should (planc-test-face-is 'font-lock-string-face "# no"))
    (should-not (planc-test-face-is 'planc-field-keyword-face "after b"))))

(ert-deftest planc-mode-highlights-templates-and-literals ()
  (planc-test-with-text "template review(change: string, approvals: int = 2) {\n    task check \"Check {change}\"\n}\nplan p {\n    use review(change = \"x\", approvals = -1) as first\n    param ratio: float = 0.5\n    param fast: bool = true\n    task t \"T\" { optional }  # done\n}\n"
    (should (planc-test-face-is 'font-lock-keyword-face "template"))
    (should (planc-test-face-is 'font-lock-function-name-face "review("))
    (should (planc-test-face-is 'font-lock-variable-name-face "change: string"))
    (should (planc-test-face-is 'font-lock-type-face "string,"))
    (should (planc-test-face-is 'font-lock-type-face "int ="))
    (should (planc-test-face-is 'font-lock-keyword-face "use review"))
    (should (planc-test-face-is 'font-lock-function-name-face "review(change ="))
    (should (planc-test-face-is 'planc-number-face "-1"))
    (should (planc-test-face-is 'font-lock-keyword-face "as first"))
    (should (planc-test-face-is 'font-lock-function-name-face "first"))
    (should (planc-test-face-is 'planc-number-face "0.5"))
    (should (planc-test-face-is 'font-lock-constant-face "true"))
    (should (planc-test-face-is 'planc-field-keyword-face "optional"))
    (should (planc-test-face-is 'font-lock-comment-face "# done" 1 2))))

;;;; Syntax, files and indentation

(ert-deftest planc-mode-syntax-and-files ()
  (should (eq (assoc-default "/x/plan/jd.plan" auto-mode-alist #'string-match)
              'planc-mode))
  (planc-test-with-text (planc-test-read "sample.plan")
    (should (equal comment-start "# "))
    (search-forward "Check the")
    (should (eq (nth 3 (syntax-ppss)) t))          ; a """ string
    (search-forward "{{twice")
    (should (nth 3 (syntax-ppss)))                 ; a `"' inside it did not end it
    (search-forward "task publish")
    (should-not (nth 3 (syntax-ppss)))
    (should (= (car (syntax-ppss)) 1))             ; inside the plan's braces
    (goto-char (point-min))
    (should (nth 4 (syntax-ppss (+ (point-min) 3)))) ; the first line is a comment
    (comment-region (line-beginning-position 3) (line-end-position 3))
    (should (string-prefix-p "# " (string-trim-left (thing-at-point 'line))))))

(defun planc-test-misindent (text)
  "TEXT with the indentation of every line outside strings made wrong."
  (with-temp-buffer
    (insert text)
    (planc-mode)
    (goto-char (point-min))
    (let ((n 0))
      (while (not (eobp))
        (unless (or (looking-at-p "[ \t]*$")
                    (nth 3 (syntax-ppss (line-beginning-position))))
          (indent-line-to (if (cl-oddp (setq n (1+ n))) 0 7)))
        (forward-line 1)))
    (buffer-string)))

(ert-deftest planc-mode-indents-as-planc-fmt ()
  (let ((formatted (planc-test-read "sample.plan")))
    (planc-test-with-text (planc-test-misindent formatted)
      (should-not (equal (buffer-string) formatted))
      (indent-region (point-min) (point-max))
      (should (equal (buffer-string) formatted))))
  ;; Typing: a new line after `{' is indented one level, `}' closes it.
  (planc-test-with-text "plan p {\n    step s {"
    (goto-char (point-max))
    (newline-and-indent)
    (insert "task a \"A\"")
    (newline-and-indent)
    (insert "}")
    (indent-according-to-mode)
    (should (equal (buffer-string)
                   "plan p {\n    step s {\n        task a \"A\"\n    }"))))

;;;; Formatting without a server, and the servers' registration

(ert-deftest planc-mode-formats-with-planc-fmt ()
  (planc-test-skip-unless-in-ci (executable-find planc-executable))
  (let ((formatted (planc-test-read "sample.plan")))
    (planc-test-with-text (replace-regexp-in-string "^ +" "" formatted)
      (planc-format-buffer)
      (should (equal (buffer-string) formatted))))
  (planc-test-with-text "plan p {\n  task a \"A\" {\n"
    (let ((err (should-error (planc-format-buffer) :type 'user-error)))
      (should (string-match-p "fix the syntax errors" (cadr err))))
    (should (equal (buffer-string) "plan p {\n  task a \"A\" {\n"))))

(ert-deftest planc-mode-registers-with-eglot-and-lsp-mode ()
  (should (equal (assoc '(planc-mode :language-id "plan") eglot-server-programs)
                 '((planc-mode :language-id "plan") "planc" "lsp")))
  (planc-test-skip-unless-in-ci (locate-library "lsp-mode"))
  (require 'lsp-mode)
  (let ((client (gethash 'planc lsp-clients)))
    (should client)
    (should (equal (lsp--client-major-modes client) '(planc-mode)))
    (should (equal (assoc 'planc-mode lsp-language-id-configuration)
                   '(planc-mode . "plan")))))

;;;; The language server through Eglot

(defun planc-test-wait-for (what predicate)
  "Wait up to 20 s for PREDICATE to hold; fail saying WHAT did not come."
  (let ((deadline (+ (float-time) 20)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.02))
    (or (funcall predicate) (error "No %s within 20 s" what))))

(defmacro planc-test-with-eglot (file &rest body)
  "Visit a copy of sample FILE with `planc lsp' started by Eglot, run BODY."
  (declare (indent 1))
  `(let* ((directory (make-temp-file "planc-eglot" t))
          (path (expand-file-name ,file directory)))
     (copy-file (expand-file-name ,file planc-test-directory) path)
     (let ((buffer (find-file-noselect path)))
       (unwind-protect
           (with-current-buffer buffer
             (switch-to-buffer buffer)
             (should (eq major-mode 'planc-mode))
             (apply #'eglot (eglot--guess-contact))
             (should (eglot-managed-p))
             ,@body)
         (let ((server (with-current-buffer buffer (eglot-current-server))))
           (when server (eglot-shutdown server)))
         (with-current-buffer buffer (set-buffer-modified-p nil))
         (kill-buffer buffer)
         (delete-directory directory t)))))

(defun planc-test-goto (needle &optional offset)
  "Put point OFFSET chars into the first NEEDLE from the buffer's start."
  (goto-char (point-min))
  (search-forward needle)
  (goto-char (+ (match-beginning 0) (or offset 0))))

(ert-deftest planc-eglot-diagnostics-in-flymake ()
  (planc-test-skip-unless-in-ci (executable-find "planc"))
  (planc-test-with-eglot "broken.plan"
    (should flymake-mode)
    (planc-test-wait-for "diagnostics"
                         (lambda () (>= (length (flymake-diagnostics)) 2)))
    (let ((found (mapcar (lambda (d)
                           (let ((beg (flymake-diagnostic-beg d)))
                             (format "%d:%d %s %s"
                                     (line-number-at-pos beg)
                                     (save-excursion (goto-char beg) (current-column))
                                     (flymake-diagnostic-type d)
                                     (car (split-string (flymake-diagnostic-text d) "\n")))))
                         (flymake-diagnostics))))
      (should (equal (sort found #'string<)
                     '("4:37 eglot-error planc [planc::unknown_role]: no role named `writr`"
                       "5:36 eglot-error planc [planc::unknown_ref]: no task or step named `draf`"))))))

(ert-deftest planc-eglot-hover-definition-completion ()
  (planc-test-skip-unless-in-ci (executable-find "planc"))
  (planc-test-with-eglot "sample.plan"
    ;; Hover at a task's name in an `after' list: the task's title.
    (planc-test-goto "draft, notes" 1)
    (let (hover)
      (eglot-hover-eldoc-function (lambda (text &rest _) (setq hover (or text ""))))
      (planc-test-wait-for "hover" (lambda () hover))
      (should (string-match-p "Draft it" hover)))
    ;; Definition: to the task's declaration.
    (planc-test-goto "draft, notes" 2)
    (xref-find-definitions (xref-backend-identifier-at-point 'eglot))
    (should (= (line-number-at-pos) 12))
    (should (looking-at-p "draft \"Draft it\""))
    ;; Completion at a reference: the names of tasks and steps.
    (planc-test-goto "notes\n")
    (let* ((capf (eglot-completion-at-point))
           (names (all-completions "" (nth 2 capf))))
      (dolist (name '("draft" "outline" "notes" "write"))
        (should (member name names)))
      (should-not (member "retry" names)))))

(ert-deftest planc-eglot-rename-and-format ()
  (planc-test-skip-unless-in-ci (executable-find "planc"))
  (planc-test-with-eglot "sample.plan"
    (let ((formatted (buffer-string)))
      (planc-test-goto "draft \"Draft it\"" 2)
      (eglot-rename "first_draft")
      (should (string-match-p "task first_draft \"Draft it\" {" (buffer-string)))
      (should (string-match-p "after first_draft, notes" (buffer-string)))
      (let ((case-fold-search nil))
        ;; Only the word inside the description's text is left.
        (should (= (how-many "\\_<draft\\_>" (point-min) (point-max)) 1))
        (should (= (how-many "\\_<first_draft\\_>" (point-min) (point-max)) 2)))
      ;; Formatting through the server: the indentation taken away comes back.
      (let ((renamed (buffer-string)))
        (goto-char (point-min))
        (while (re-search-forward "^ +" nil t) (replace-match ""))
        (should-not (equal (buffer-string) renamed))
        (planc-format-buffer)            ; eglot-format-buffer, as Eglot manages it
        (should (equal (buffer-string) renamed))
        (should (equal (replace-regexp-in-string "first_draft" "draft" renamed)
                       formatted))))))

(provide 'planc-mode-tests)
;;; planc-mode-tests.el ends here
