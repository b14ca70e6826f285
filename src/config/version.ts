// The configuration format versions this runtime reads, and the check of a file's `version` field.

/** The format versions the runtime reads fully (agent-runtime-config.md, Versioning). */
export const SUPPORTED_VERSIONS = ['v1.0.0', 'v1.0.1', 'v1.0.2', 'v1.0.3', 'v1.0.4', 'v1.0.5'] as const;
export const LATEST_VERSION = 'v1.0.5';
const SUPPORTED_TEXT = `this runtime reads v1.0.0 to ${LATEST_VERSION}`;

export type VersionCheck =
  | { ok: true; version: string; warning?: string }
  | { ok: false; message: string /** false when the file's format is unknown and checking it further is pointless */; continue: boolean };

/**
 * Checks `version`: required, of the form `vMAJOR.MINOR.PATCH`. v1.0.0 to v1.0.5 load silently;
 * a newer v1.x loads with one warning (its new fields are kept and reported as unknown); any other
 * major version is refused, since its format may differ in ways this runtime cannot see.
 */
export function checkVersion(raw: unknown): VersionCheck {
  if (raw === undefined) return { ok: false, continue: true, message: `required; ${SUPPORTED_TEXT}, for example version: "${LATEST_VERSION}"` };
  if (typeof raw !== 'string') {
    return { ok: false, continue: true, message: `expected a string such as "${LATEST_VERSION}", got ${JSON.stringify(raw)}; ${SUPPORTED_TEXT}` };
  }
  const m = /^v(\d{1,6})\.(\d{1,6})\.(\d{1,6})$/.exec(raw.trim());
  if (!m) {
    return { ok: false, continue: true, message: `malformed version ${JSON.stringify(raw)}: expected vMAJOR.MINOR.PATCH; ${SUPPORTED_TEXT}` };
  }
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (major !== 1) {
    return { ok: false, continue: false, message: `unsupported version ${raw}: ${SUPPORTED_TEXT} (and newer v1.x with a warning)` };
  }
  if (minor === 0 && patch <= 5) return { ok: true, version: raw.trim() };
  return {
    ok: true,
    version: raw.trim(),
    warning: `version ${raw} is newer than this runtime knows (${SUPPORTED_TEXT}); loading it as ${LATEST_VERSION}: fields added after ${LATEST_VERSION} are reported as unknown`,
  };
}
