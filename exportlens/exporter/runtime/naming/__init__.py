"""Saying what torch decided in the user's names: records and guards as findings on the
user's lines, with the user's dims (torch side)."""
