// The log level from the environment: CORTEX_LOG_LEVEL before LOG_LEVEL, a blank value as unset, anything but a pino level refused by name.
import t from 'tap';
import { envLogLevel } from '../../src/log.js';

const withEnv = (env: Record<string, string | undefined>, fn: () => void) => {
  const saved = { CORTEX_LOG_LEVEL: process.env.CORTEX_LOG_LEVEL, LOG_LEVEL: process.env.LOG_LEVEL };
  for (const [k, v] of Object.entries({ CORTEX_LOG_LEVEL: undefined, LOG_LEVEL: undefined, ...env })) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
};

t.test('unset, empty and blank values leave the level to the caller', async (t) => {
  withEnv({}, () => t.equal(envLogLevel(), undefined));
  withEnv({ CORTEX_LOG_LEVEL: '' }, () => t.equal(envLogLevel(), undefined));
  withEnv({ CORTEX_LOG_LEVEL: '  ', LOG_LEVEL: '' }, () => t.equal(envLogLevel(), undefined));
});

t.test('CORTEX_LOG_LEVEL wins over LOG_LEVEL; an empty one falls through to LOG_LEVEL; case is ignored', async (t) => {
  withEnv({ CORTEX_LOG_LEVEL: 'debug', LOG_LEVEL: 'error' }, () => t.equal(envLogLevel(), 'debug'));
  withEnv({ CORTEX_LOG_LEVEL: '', LOG_LEVEL: 'error' }, () => t.equal(envLogLevel(), 'error'));
  withEnv({ CORTEX_LOG_LEVEL: 'WARN' }, () => t.equal(envLogLevel(), 'warn'));
});

t.test('a value that is no level is refused with the variable and the levels', async (t) => {
  withEnv({ LOG_LEVEL: 'verbose' }, () =>
    t.throws(() => envLogLevel(), { name: 'CortexError', code: 'log_level', message: /LOG_LEVEL="verbose" is not a log level: use one of trace, debug, info/ }),
  );
});
