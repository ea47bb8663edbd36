#!/bin/bash
# usage: check.sh owner/repo N   -> prints hits in repo, shared, sealed, sealed2
r=$1; n=$2; name=${r#*/}
pat="($r|$name)(/issues/|/pull/|/discussions/|#| PR | issue | PR #| issue #)$n([^0-9]|\$)"
a=$(git -C /work/main grep -I -i -E "$pat" | head -3)
b=$(grep -rIiE "$pat" /work/shared /work/sealed /work/sealed2 2>/dev/null | head -3)
if [ -z "$a$b" ]; then echo "CLEAN $r#$n"; else echo "HIT $r#$n"; echo "$a" | cut -c1-200; echo "$b" | cut -c1-200; fi
