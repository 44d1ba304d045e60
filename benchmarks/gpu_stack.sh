#!/bin/sh
# The product's stack on the GPU machine, which has CuPy but no package index, no PostgreSQL and no Redis:
# PostgreSQL 15 and Redis 7 from Debian 12's packages (carried in .debs/), Django, Celery and the rest from
# wheels (carried in .whl/); then runs the command given, e.g.
#
#   sh benchmarks/gpu_stack.sh python3 scripts/with_services.py -- python3 benchmarks/gpu_scaleout.py ...
#
# scripts/with_services.py then starts a throwaway PostgreSQL cluster and Redis server from the unpacked
# binaries (PATH), as on any machine without the services. How the two folders are filled, on the developer's
# machine (both are git-ignored; the device tool carries them with `carry: [".debs", ".whl"]`):
#
#   cd .debs && apt-get download postgresql-15 libpq5 libicu72 libldap-2.5-0 libsasl2-2 \
#     libsasl2-modules-db redis-server redis-tools libjemalloc2 liblzf1 libxslt1.1 libgssapi-krb5-2 libkrb5-3 \
#     libk5crypto3 libkrb5support0 libkeyutils1 libcom-err2 libpam0g libselinux1 liblz4-1 \
#     libzstd1 libpcre2-8-0 libcap2 libgpg-error0 liblzma5 libuuid1
#   pip download -d .whl --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 \
#     --implementation cp 'django>=5.2,<6' 'psycopg[binary]>=3.2' dj-database-url 'celery[redis]>=5.4' redis \
#     djangorestframework drf-spectacular drf-spectacular-sidecar whitenoise msgspec tqdm
#
# The checkout and both folders must fit in the device tool's 64 MiB (benchmarks/gpu_stack_pack.sh packs .debs/ into
# one smaller file when they do not): psql (postgresql-client-15) is not needed,
# and libgcrypt20, libxml2 and libsystemd0 are on the GPU machine's image already. Add pytest-django to the pip
# line to run the Django tests there (the machine has pytest). Every wheel in .whl/ is installed.
#
# Only the libraries the machine lacks are taken from the packages (found with ldd), so the machine's own
# (newer) ones are used wherever it has them.
set -eu
SW=${SPREADWATCH_STACK_DIR:-/opt/spreadwatch-stack}
mkdir -p "$SW/missing"
if [ -f .debs/stack.tar.xz ]; then  # packed by benchmarks/gpu_stack_pack.sh: the packages, smaller
  tar -C "$SW" -xJf .debs/stack.tar.xz
else
  for f in .debs/*.deb; do dpkg -x "$f" "$SW"; done
fi
PGBIN=$(ls -d "$SW"/usr/lib/postgresql/*/bin | sort -V | tail -1)
# no JIT: its provider needs LLVM (22 MB more to carry); PostgreSQL skips JIT when llvmjit.so is not there
rm -f "$SW"/usr/lib/postgresql/*/lib/llvmjit*.so
for round in 1 2 3; do  # a library taken from the packages may itself need another one
  for bin in "$PGBIN/postgres" "$PGBIN/initdb" "$SW/usr/bin/redis-server"; do
    LD_LIBRARY_PATH="$SW/missing" ldd "$bin" 2>/dev/null | awk '/not found/ {print $1}' | while read -r lib; do
      found=$(find "$SW/usr/lib" "$SW/lib" -name "$lib" 2>/dev/null | head -1)
      if [ -n "$found" ]; then ln -sf "$found" "$SW/missing/$lib"; else echo "gpu_stack: $lib: not in .debs/" >&2; fi
    done
  done
done
export LD_LIBRARY_PATH="$SW/missing${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$PGBIN:$SW/usr/bin:$PATH"
# initdb refuses to run as root: with_services.py runs PostgreSQL's tools as the `postgres` user
id postgres >/dev/null 2>&1 || useradd --system --no-create-home --shell /bin/sh postgres 2>/dev/null \
  || echo "postgres:x:999:999::/nonexistent:/bin/sh" >>/etc/passwd
chmod o+rx "$SW" 2>/dev/null || true
python3 -m pip install -q --no-index --find-links .whl .whl/*.whl
echo "gpu_stack: $("$PGBIN/postgres" --version), $(redis-server --version | cut -d' ' -f1-3), $(python3 -c 'import django, celery; print("Django", django.get_version(), "Celery", celery.__version__)')"
exec "$@"
