"""``python -m services.manage``: ``ashlar-manage``."""

import sys

from services.manage import main

sys.exit(main())
