# Cited by name (NOTES.md, "The second
# part") and (../README.md, "Setup"), by anchor (NOTES.md#first).
"""The top's sections (README's "Setup" and "Good")."""
// A name after a comment leader (NOTES.md,
// "First").
// A dated entry cited without its date (NOTES.md, "A dated entry").
