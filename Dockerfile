# skillbank server: one stateless team worker (MCP over HTTP at /mcp, /healthz, /readyz,
# /metrics). Run several behind a load balancer, over PostgreSQL and a Chroma server:
# compose.yaml starts two with both; docs/team.md, "A team deployment from a fresh machine".
#
#   docker build -t skillbank .
#   docker run -e SKILLBANK_DATABASE_URL=... -e SKILLBANK_CHROMA_URL=... \
#              -e SKILLBANK_TOKEN=... -p 8080:8080 -v skillbank-root:/data skillbank
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    ANONYMIZED_TELEMETRY=False

# git: the skills repository a team serves (issue 24); nothing else is needed at run time.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 skillbank \
    && mkdir /data && chown skillbank /data

WORKDIR /src
# The folders pyproject.toml maps into the package ([tool.setuptools.package-dir]).
COPY pyproject.toml README.md LICENSE ./
COPY skillbank ./skillbank
COPY adapters ./adapters
COPY mcp_server ./mcp_server
COPY skills ./skills
RUN pip install ".[team]" && rm -rf /src/build

USER skillbank
WORKDIR /home/skillbank
# The embedding model (all-MiniLM-L6-v2, ONNX) is fetched once, at build time, into the image:
# a worker then starts without network access to a model hub.
RUN python -c "from skillbank.embeddings import resolve_model_dir; print(resolve_model_dir())"
ENV SKILLBANK_MODEL_DIR=/home/skillbank/.cache/chroma/onnx_models/all-MiniLM-L6-v2 \
    SKILLBANK_ROOT=/data

VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=120s \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=4)"
ENTRYPOINT ["skillbank", "server"]
CMD ["--host", "0.0.0.0", "--port", "8080"]
