"""Reading torch's failures, once: what a failed export raised, as frozen records placed on
the user's line (torch side)."""
