#!/bin/bash
# genai-perf (NVIDIA's LLM benchmark client, PyPI) against inferd's ModelStreamInfer, unchanged:
# Triton's KServe gRPC streaming as a decoupled TensorRT-LLM model would answer it.
#
# Serves MODEL_DIR (a Hugging Face or ONNX Runtime GenAI folder) from a temporary repository with
# `generation` settings, runs `genai-perf profile` on it and prints genai-perf's table (time to
# first token, inter-token latency, output tokens/s, requests/s).
#
# Needs: bazel-bin/server/inferd (or $INFERD); /opt/inferd/genai-perf-venv with genai-perf
# (python3 -m venv /opt/inferd/genai-perf-venv && .../pip install genai-perf==0.0.16);
# perf_analyzer and libcudart from the test virtualenv (/opt/inferd/venv: tritonclient's wheel
# and nvidia-cuda-runtime-cu12, deploy/requirements-test.txt). The tokenizer genai-perf counts
# with is the model folder's own tokenizer.json (no hub access).
#
# usage: genai_perf.sh MODEL_DIR [CONCURRENCY=1] [INPUT_TOKENS=64] [OUTPUT_TOKENS=64] [THREADS=2]
set -euo pipefail
model=$(realpath "$1")
concurrency=${2:-1}
input_tokens=${3:-64}
output_tokens=${4:-64}
threads=${5:-2}
inferd=$(realpath "${INFERD:-bazel-bin/server/inferd}")
venv=/opt/inferd/genai-perf-venv
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT

mkdir -p "$work/models/llm"
for f in "$model"/*; do
  case "$(basename "$f")" in expected.json | checkpoint) ;; *) ln -s "$f" "$work/models/llm/" ;; esac
done
cat > "$work/models/llm/config.yaml" <<EOF
threads: $threads
generation:
  max_length: $((input_tokens + output_tokens + 64))
  max_sequences: $concurrency
EOF
"$inferd" --model-repository="$work/models" --grpc-port=0 --http-port=0 --metrics-port=0 \
  --admin-port=0 --port-file "$work/port" > "$work/inferd.log" 2>&1 &
pid=$!
for _ in $(seq 600); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { cat "$work/inferd.log"; exit 1; }
port=$(cat "$work/port")

cuda_lib=$(dirname "$(find /opt/inferd/venv -name 'libcudart.so.12' | head -1)")
cd "$work"
PATH="/opt/inferd/venv/bin:$PATH" LD_LIBRARY_PATH="$cuda_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  "$venv/bin/genai-perf" profile -m llm --endpoint-type kserve --backend tensorrtllm \
  --streaming -u "localhost:$port" --tokenizer "$work/models/llm" \
  --synthetic-input-tokens-mean "$input_tokens" --synthetic-input-tokens-stddev 0 \
  --output-tokens-mean "$output_tokens" --output-tokens-stddev 0 --output-tokens-mean-deterministic \
  --concurrency "$concurrency" --num-dataset-entries 20 --warmup-request-count 2 \
  --measurement-interval 20000 -- -x 1
