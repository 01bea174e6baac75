"""What can be known without running the user's code: modules (libcst), specs, shapes, plans,
import closures, edits and scaffolds. Never imports torch: the language server uses it."""
