#!/usr/bin/env bash
# Checks the deployment files without deploying them: compose.yaml and the Kubernetes
# manifests in deploy/ parse, have the shape docs/DEPLOY.md describes, validate against
# their schemas, and name only settings the binary has (every MEDIAEDIT_* variable is a
# flag of `mediaedit serve`). Seconds long; run by .ci/run.
#
# compose.yaml: `docker compose config` / `podman compose config` / `docker-compose
# config` where one is installed, and always a YAML parse with structural checks.
# deploy/: `kubectl apply --dry-run=client` where kubectl reaches a cluster (it needs
# one for its resource mapping; skipped, saying so, where none is), and always
# kubernetes-validate (PyPI; the Kubernetes schemas ship inside it) with --strict.
set -euo pipefail
cd "$(dirname "$0")/.."

KUBERNETES_VALIDATE_VERSION=1.37.0
PYYAML_VERSION=6.0.3
target="${CARGO_TARGET_DIR:-target}"
venv="$target/deploy-check/venv"
bin="${MEDIAEDIT_BIN:-$target/debug/mediaedit}"
say() { echo "deploy-check: $*" >&2; }

if ! "$venv/bin/python" -c 'import kubernetes_validate, yaml' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" "pyyaml==$PYYAML_VERSION"
fi
[ -x "$bin" ] || cargo build --locked --quiet --bin mediaedit
flags=$("$bin" serve --help | sed -n 's/.*\[env: \(MEDIAEDIT_[A-Z_]*\)=.*/\1/p' | sort -u)
[ -n "$flags" ] || { say "no MEDIAEDIT_ variables in 'mediaedit serve --help'"; exit 1; }

if docker compose version >/dev/null 2>&1; then
  docker compose -f compose.yaml config --quiet && say "docker compose config: valid"
elif podman compose version >/dev/null 2>&1; then
  podman compose -f compose.yaml config >/dev/null && say "podman compose config: valid"
elif command -v docker-compose >/dev/null 2>&1; then
  docker-compose -f compose.yaml config --quiet && say "docker-compose config: valid"
else
  say "no compose tool installed: compose.yaml is checked by the parse below only"
fi

if command -v kubectl >/dev/null 2>&1 && kubectl cluster-info --request-timeout=3s >/dev/null 2>&1; then
  kubectl apply --dry-run=client -f deploy/ && say "kubectl apply --dry-run=client: valid"
elif command -v kubectl >/dev/null 2>&1; then
  say "kubectl is installed but reaches no cluster: skipping its dry run"
else
  say "kubectl is not installed: skipping its dry run"
fi
"$venv/bin/kubernetes-validate" --strict --quiet deploy/*.yaml
say "deploy/*.yaml: valid against the Kubernetes $KUBERNETES_VALIDATE_VERSION schemas"

FLAGS="$flags" "$venv/bin/python" - <<'EOF'
import glob, os, sys
import yaml

flags = set(os.environ["FLAGS"].split())
# What the S3 client reads (docs/DEPLOY.md, "A cluster").
aws = {"AWS_ENDPOINT", "AWS_ALLOW_HTTP", "AWS_REGION", "AWS_DEFAULT_REGION",
       "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"}
problems = []

def check_env(where, names):
    for name in names:
        if name.startswith("MEDIAEDIT_") and name not in flags:
            problems.append(f"{where}: {name} is no flag of `mediaedit serve`")
        elif name.startswith("AWS_") and name not in aws:
            problems.append(f"{where}: {name} is not read by the S3 client")

with open("compose.yaml") as f:
    compose = yaml.safe_load(f)
services = compose["services"]
nodes = [name for name, s in services.items()
         if "MEDIAEDIT_DATABASE_URL" in (s.get("environment") or {})]
if len(nodes) != 2:
    problems.append(f"compose.yaml: {len(nodes)} mediaedit nodes, not 2")
for name in nodes:
    env = services[name]["environment"]
    check_env(f"compose.yaml {name}", env)
    if not str(env["MEDIAEDIT_DATABASE_URL"]).startswith("postgres://"):
        problems.append(f"compose.yaml {name}: the database is not PostgreSQL")
    if not str(env.get("MEDIAEDIT_STORAGE_URL", "")).startswith("s3://"):
        problems.append(f"compose.yaml {name}: the storage is not S3")
    if "MEDIAEDIT_PUBLIC_URL" not in env:
        problems.append(f"compose.yaml {name}: no public URL")
    if services[name].get("build", {}).get("dockerfile") != "Containerfile":
        problems.append(f"compose.yaml {name}: not built from Containerfile")
images = " ".join(str(s.get("image", "")) for s in services.values())
for needed in ("postgres", "minio/minio", "minio/mc"):
    if needed not in images:
        problems.append(f"compose.yaml: no {needed} service")

kinds = {}
for path in sorted(glob.glob("deploy/*.yaml")):
    with open(path) as f:
        for doc in yaml.safe_load_all(f):
            if not doc:
                continue
            kinds.setdefault(doc["kind"], []).append(doc)
            if doc["kind"] == "ConfigMap":
                check_env(path, doc["data"])
            if doc["kind"] == "Secret":
                check_env(path, doc.get("stringData", {}))
            if doc["kind"] == "Deployment":
                container = doc["spec"]["template"]["spec"]["containers"][0]
                check_env(path, [e["name"] for e in container.get("env", [])])
roles = sorted(
    d["spec"]["template"]["spec"]["containers"][0]["args"][-1] for d in kinds.get("Deployment", [])
)
if roles != ["api", "worker"]:
    problems.append(f"deploy/: Deployments for roles {roles}, not api and worker")
for kind in ("Service", "Secret", "ConfigMap"):
    if kind not in kinds:
        problems.append(f"deploy/: no {kind}")
secret = kinds.get("Secret", [{}])[0].get("stringData", {})
for key in ("MEDIAEDIT_DATABASE_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
    if key not in secret:
        problems.append(f"deploy/: the Secret lacks {key}")

for problem in problems:
    print(f"deploy-check: {problem}", file=sys.stderr)
sys.exit(1 if problems else 0)
EOF
say "compose.yaml and deploy/ name only real settings: passed"
