"""onlinews-report: reads an onlinews result file and prints what a
performance engineer needs (text, --json, --plot DIR, --follow)."""
