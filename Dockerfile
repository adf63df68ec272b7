FROM python:3.11-slim
WORKDIR /app
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY pyproject.toml README.md ./
COPY config config
COPY apps apps
COPY workers workers
RUN pip install --no-cache-dir .
COPY . .
RUN DJANGO_SECRET_KEY=build-only-collectstatic python manage.py collectstatic --no-input -v0
# Bytecode now: with PYTHONDONTWRITEBYTECODE every start would compile our 330 modules again
RUN python -m compileall -q config apps workers
EXPOSE 8000
CMD ["gunicorn", "config.wsgi", "-b", "0.0.0.0:8000", "-w", "3"]
