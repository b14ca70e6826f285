// Which environment variables a configuration may read, and where: a documented allowlist, names the file adds, and secrets kept to credential fields.
/*
 * A configuration's `${VAR}` reads the robot's environment, and most strings of a configuration end
 * up somewhere: a prompt sent to the model, a URL, a header, a log line. So a file may read only:
 *   - the built-ins CONFIG_DIR and STATE_DIR, and the runtime's own names: OM_API_KEY, URID,
 *     ROS_DOMAIN_ID, CYCLONEDDS_URI, and every CORTEX_* variable;
 *   - settings of the robot by the shape of their name: *_PORT, *_DEVICE, *_URL, *_URI, *_HOST, *_IP,
 *     *_ETHERNET, *_INTERFACE, *_MODEL, *_ID, *_NAME, *_LANGUAGE, *_VOICE, USE_*;
 *   - secrets by the shape of their name: *_KEY, *_TOKEN, *_SECRET, *_PASSWORD, *_PASS, *_CREDENTIALS;
 *   - the names the file lists itself in `allowed_variables` (its author says they are fit to send).
 * A secret (OM_API_KEY and URID included) goes only into a credential field: a field named api_key,
 * *_key, key, token, *_token, password, secret, authorization, or any value under `headers` or a
 * program's `env`. Anywhere else it would be sent as text (in a prompt, a URL), which `check` refuses
 * even when the name is listed. Anything else (`${HOME}`, `${USER}`, `${DB_URL_SECRETLY}`) is refused.
 */

const RUNTIME = new Set(['CONFIG_DIR', 'STATE_DIR', 'OM_API_KEY', 'URID', 'ROS_DOMAIN_ID', 'CYCLONEDDS_URI']);
const SETTING = /^(CORTEX_[A-Z0-9_]+|USE_[A-Z0-9_]+|[A-Z0-9_]+_(PORT|DEVICE|URL|URI|HOST|IP|ETHERNET|INTERFACE|MODEL|ID|NAME|LANGUAGE|VOICE))$/;
const SECRET = /^(OM_API_KEY|URID|[A-Z0-9_]*_(KEY|TOKEN|SECRET|PASSWORD|PASS|CREDENTIALS))$/;
const CREDENTIAL_FIELD = /^(api_key|key|token|password|secret|authorization|[a-z0-9_]*_(key|token|password|secret))$/i;

/** True when the variable's name says it holds a secret. */
export const isSecretName = (name: string) => SECRET.test(name);

/** True when the value at `path` is a credential: it is sent to authenticate, never as text. */
export function isCredentialPath(path: ReadonlyArray<string | number>): boolean {
  const last = path[path.length - 1];
  if (typeof last === 'string' && CREDENTIAL_FIELD.test(last)) return true;
  return path.slice(0, -1).some((p) => p === 'headers' || p === 'env');
}

/** The `${NAME` references of `text` (a literal `$${` is not one). */
function references(text: string): string[] {
  const out: string[] = [];
  const re = /\$\{([A-Za-z_][A-Za-z0-9_]*)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) if (m.index === 0 || text[m.index - 1] !== '$') out.push(m[1]!);
  return out;
}

export interface VariableProblem {
  path: Array<string | number>;
  message: string;
}

/**
 * Every read of the environment in `raw` (the file as parsed, before substitution) that the policy
 * refuses, with the path and the fix. `allowed` are the names the file lists in `allowed_variables`.
 */
export function variableProblems(raw: unknown, allowed: ReadonlySet<string>): VariableProblem[] {
  const problems: VariableProblem[] = [];
  const walk = (v: unknown, path: Array<string | number>, depth: number) => {
    if (depth > 200) return;
    if (typeof v === 'string') {
      for (const name of new Set(references(v))) {
        if (isSecretName(name)) {
          if (!isCredentialPath(path))
            problems.push({
              path,
              message: `\${${name}} is a secret by its name and may be read only into a credential field (api_key, a *_key or *_token field, a header, a program's env); here it would be sent as text`,
            });
        } else if (!RUNTIME.has(name) && !SETTING.test(name) && !allowed.has(name)) {
          problems.push({
            path,
            message: `\${${name}} is not a variable a configuration may read (docs/security.md): add "${name}" to allowed_variables at the top of the file if it is fit to send where it goes`,
          });
        }
      }
    } else if (Array.isArray(v)) v.forEach((item, i) => walk(item, [...path, i], depth + 1));
    else if (v && typeof v === 'object') for (const [k, item] of Object.entries(v)) walk(item, [...path, k], depth + 1);
  };
  walk(raw, [], 0);
  return problems;
}

/** `allowed_variables` of a parsed file: the names it lists (bad entries are the schema's to report). */
export function allowedVariables(raw: Record<string, unknown>): Set<string> {
  const list = raw.allowed_variables;
  return new Set(Array.isArray(list) ? list.filter((n): n is string => typeof n === 'string') : []);
}
