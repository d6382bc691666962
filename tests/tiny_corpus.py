"""The two-page corpus the unit and end-to-end tests index: one robotics page, one off-topic page."""

ISAAC_SIM_MD = """\
---
title: Isaac Sim
---
# Isaac Sim

Isaac Sim is a robotics simulator built on Omniverse. It renders physically accurate scenes for robot testing.

## Synthetic data

Isaac Sim generates synthetic data with Replicator. Replicator randomizes lighting, textures and camera \
poses to produce labelled images.
"""

BAKING_MD = """\
# Baking bread

Bread dough needs flour, water, yeast and salt. Knead the dough for ten minutes until smooth.

## Oven

Bake the loaf in a hot oven at two hundred and twenty degrees for forty minutes.
"""

CORPUS = {"isaac-sim.md": ISAAC_SIM_MD, "baking.md": BAKING_MD}

# A page that chunking (200 tokens) cuts between a lead-in sentence and the code block it introduces.
LEAD_IN_PAGE = """# Configuration

## Checking the configuration

The logger is configured once, when the application starts, by calling `configure` with the processors, the
logger factory and the wrapper class that every bound logger will use from then on. Libraries that log
through it should never call `configure` themselves, since the application owns the configuration and a
library that configures it would overwrite the choices made by the application that imports it. Calling
`configure` again later replaces only the settings it is given and keeps the others, which makes it safe to
adjust one setting in tests. Resetting everything to the defaults is done with `reset_defaults`, which is
handy between tests that each configure the logger differently.

A library can find out whether the application configured the logger, and how, with `is_configured` and `get_config`:

```python
>>> is_configured()
False
>>> get_config()["logger_factory"]
<class 'LoggerFactory'>
```

Both are cheap to call.
"""

# One long example that chunking cuts into pieces: the client's TLS options sit mid-way, inside an open call.
SPLIT_CODE_PAGE = """# Client certificate

## Client certificate authentication

```js
const { readFileSync } = require('node:fs')
const { join } = require('node:path')
const { createServer } = require('node:https')
const { Client } = require('undici')

const serverOptions = {
  ca: [
    readFileSync(join(__dirname, 'client-ca-crt.pem'), 'utf8')
  ],
  key: readFileSync(join(__dirname, 'server-key.pem'), 'utf8'),
  cert: readFileSync(join(__dirname, 'server-crt.pem'), 'utf8'),
  requestCert: true,
  rejectUnauthorized: false
}

const server = createServer(serverOptions, (req, res) => {
  // true if the certificate the client sent is valid
  if (req.client.authorized === true) {
    console.log('valid')
  } else {
    console.error(req.client.authorizationError)
  }
  res.end()
})

server.listen(0, function () {
  const tls = {
    ca: [
      readFileSync(join(__dirname, 'server-ca-crt.pem'), 'utf8')
    ],
    key: readFileSync(join(__dirname, 'client-key.pem'), 'utf8'),
    cert: readFileSync(join(__dirname, 'client-crt.pem'), 'utf8'),
    rejectUnauthorized: false,
    servername: 'agent1'
  }
  const client = new Client(`https://localhost:${server.address().port}`, {
    connect: tls
  })

  client.request({
    path: '/',
    method: 'GET'
  }, (err, { body }) => {
    body.on('data', (buf) => {})
    body.on('end', () => {
      client.close()
      server.close()
    })
  })
})
```
"""

# A table long enough that chunking cuts it: the later rows are stored without the header row.
SPLIT_TABLE_PAGE = "# Errors\n\n## Error codes\n\nEvery error the client raises has a code:\n\n" \
    "| Error | Code | Reason |\n| --- | --- | --- |\n" + "".join(
        f"| `{name}Error` | `ERR_{name.upper()}` | the {name.lower()} step failed after {n} attempts |\n"
        for n, name in enumerate(["Connect", "Header", "Body", "Socket", "Abort", "Info", "Proxy", "Retry", "Pool",
                                  "Dns", "Tls", "Redirect", "Cache", "Cookie", "Stream", "Decode", "Encode",
                                  "Upgrade", "Timeout", "Balance", "Mock", "Agent", "Dispatch", "Hook"], 1))

# A section longer than a chunk: the first chunk tells the symptom, the page's next chunk (same section) the fix.
SECTION_GOES_ON_PAGE = """# Syncing

## A sync that stops on a lock

When `widgetctl sync` starts, it writes a lock file into the project's `.widget` folder and removes it again when
the sync ends, so two syncs never write the same catalogue at once. If a sync is killed halfway, by a power cut, by
a terminal that was closed or by a machine that went to sleep, the lock file stays behind. The next `widgetctl sync`
then stops at once with the message "lock held by another process", even though no other process is running, and
it keeps stopping with that message on every later try. The message names the process id written in the lock file
when it was taken; that process no longer exists, which is how a stale lock differs from a sync that is still
running in another terminal. Waiting does not help, since nothing ever removes a stale lock by itself, and running
the command with more verbose logging shows the same message with the lock file's path and its age in minutes.

To recover, delete `.widget/lock` and run `widgetctl sync --resume`, which continues from the last catalogue entry
that was written instead of starting over. The resumed run takes the lock again like any other run.
"""
