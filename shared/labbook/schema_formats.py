"""Imported before nbformat: spares every build, check and HTML run about 3 s of CPU.

jsonschema imports rfc3987_syntax, when it is installed (jupyter-events pulls it in
through jsonschema[format-nongpl]), to check the "iri" formats, and that module
builds its grammar at import. No schema these tools validate (nbformat's) uses
those formats, so the import is declined; jsonschema skips the checker cleanly.
"""
import sys

sys.modules.setdefault("rfc3987_syntax", None)
