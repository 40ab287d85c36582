#!/bin/bash
# Fills the example model repository with copies of the generated models.
#
#   bazel run //deploy/example:prepare [-- DIR]
#
# DIR defaults to deploy/example/models in the workspace (what deploy/example/inferd.yaml
# reads). Each model is <name>/model.onnx with its test_data_set_0/; transformer also gets a
# config.yaml with per-model settings, merged with the main config's entry.
set -euo pipefail

workspace="${BUILD_WORKSPACE_DIRECTORY:-$(cd "$(dirname "$0")/../.." && pwd)}"
dest="${1:-$workspace/deploy/example/models}"
case "$dest" in /*) ;; *) dest="$workspace/$dest" ;; esac

# Runfiles of this sh_binary (bazel run starts it there), or bazel-bin when run by hand.
src="tools/models"
[ -d "$src/mlp" ] || src="$workspace/bazel-bin/tools/models"

mkdir -p "$dest"
for model in mlp cnn transformer; do
  if [ ! -f "$src/$model/model.onnx" ]; then
    echo "prepare: $src/$model/model.onnx is missing; bazel build //tools/models:$model" >&2
    exit 1
  fi
  rm -rf "${dest:?}/$model"
  cp -rL "$src/$model" "$dest/$model"
  chmod -R u+w "$dest/$model"
done
cat > "$dest/transformer/config.yaml" <<'YAML'
# Per-model settings beside the model; the main config's entry wins key by key.
threads: 2
queue_length: 16
YAML
echo "prepare: example models in $dest: $(cd "$dest" && echo */ | tr -d /)"
