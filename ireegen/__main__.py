import sys

from ireegen.cli import main

sys.exit(main())
