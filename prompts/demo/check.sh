# The demo's check: answer.txt must match an independent computation, and stats.cc must build and
# reproduce it. Runs in a fresh sandbox on the submitted workspace (never shown to the model).
set -eu
cd /workspace
expected=$(awk '
  function prime(n,  d) { if (n < 2) return 0; for (d = 2; d * d <= n; d++) if (n % d == 0) return 0; return 1 }
  { count++; sum += $1; primes += prime($1) }
  END { printf "count %d\nsum %d\nprimes %d\n", count, sum, primes }' input.txt)
[ "$(cat answer.txt)" = "$expected" ] || { echo "answer.txt is wrong; expected:"; echo "$expected"; exit 1; }
g++ -O2 -o /tmp/stats stats.cc
[ "$(/tmp/stats < input.txt)" = "$expected" ] || { echo "stats.cc does not reproduce answer.txt"; exit 1; }
echo "correct: $expected" | tr '\n' ' '
