"""Links out of a note and where they lead, pure: wikilinks, embeds and markdown links; the
scanners that find where links cannot be (code spans, fenced and indented code, HTML comments,
math); Obsidian's resolution of a target to a note (docs/architecture.md).

May import: vaultmem.core.lazy_patterns.
"""
