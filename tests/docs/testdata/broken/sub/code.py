# A section that went (README, "Kept") and one that never was
# (README, "Vanished section").
# A file that is not there (DESIGN.md, "Anything").

# An anchor: README.md#no-such-anchor

# Over two lines: README, "Really
# gone".
