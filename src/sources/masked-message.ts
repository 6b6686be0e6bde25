/** An error's message on one line with every given secret masked, as a SourceError may show it. */
export function maskedOneLineMessage(error: unknown, secrets: readonly string[]): string {
  const message = messageOf(error).split('\n')[0]?.trim() ?? '';
  return secrets.reduce((text, secret) => (secret === '' ? text : text.split(secret).join('***')), message);
}

function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.message === '') return messageOf(error.errors[0]);
  if (error instanceof Error) return error.message || String((error as NodeJS.ErrnoException).code ?? error.name);
  return String(error);
}
