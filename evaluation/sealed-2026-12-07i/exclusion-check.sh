#!/bin/bash
# usage: exclusion-check.sh owner/repo N  -> CLEAN or HIT with context
# searched: git -C /work/main grep (whole tree incl. evaluation/), /work/shared, /work/sealed .. /work/sealed8;
# plus bare '#N' / '(#N)' in /work/main/src/imgcheck/data and /work/main/compat_matrix (lines/files naming the same upstream)
r=$1; n=$2; name=${r#*/}
pat="($r|$name)(/issues/|/pull/|/discussions/|#| PR | issue | PR #| issue #)$n([^0-9]|\$)"
a=$(git -C /work/main grep -I -i -E "$pat" | head -3)
b=$(grep -rIiE "$pat" /work/shared /work/sealed /work/sealed2 /work/sealed3 /work/sealed4 /work/sealed5 /work/sealed6 /work/sealed7 /work/sealed8 /work/main/evaluation 2>/dev/null | head -3)
c=$(grep -rIiE "(^|[^0-9A-Za-z/])#$n([^0-9]|\$)" /work/main/src/imgcheck/data /work/main/compat_matrix 2>/dev/null | grep -i -E "$name|${r%%/*}" | head -3)
c2=$(grep -rIlE "(^|[^0-9A-Za-z/])#$n([^0-9]|\$)" /work/main/src/imgcheck/data /work/main/compat_matrix 2>/dev/null | grep -i "$name" | head -3)
if [ -z "$a$b$c$c2" ]; then echo "CLEAN $r#$n"; else echo "HIT $r#$n"; for x in "$a" "$b" "$c" "$c2"; do [ -n "$x" ] && echo "$x" | cut -c1-220; done; fi
