"""Display helpers the chapters import (student release)."""
