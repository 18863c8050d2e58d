// What the step-printing interoperability scripts share: the environment,
// one JSON line per step ({"step": ..., ...}) for the Go test that runs
// them, the failure that ends the script, and waiting for one event.
//
// Environment: TIMEOUT_MS (default 20000), and what each script names.

export const timeoutMs = parseInt(process.env.TIMEOUT_MS || '20000', 10);

// step prints one step's result.
export const step = (name, extra = {}) => console.log(JSON.stringify({ step: name, ...extra }));

// fail prints the failure and ends the script with status 1.
export function fail(msg) {
    console.log(JSON.stringify({ step: 'fail', message: msg }));
    process.exit(1);
}

// env is a required environment variable.
export function env(k) {
    const v = process.env[k];
    if (!v) { fail(`missing environment variable ${k}`); }
    return v;
}

// once resolves with the arguments of the first event named name on
// emitter (a socket.io socket) that passes match, or rejects after
// timeoutMs.
export const once = (emitter, name, match = () => true) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${name} within ${timeoutMs} ms`)), timeoutMs);
    const on = (...args) => {
        if (!match(...args)) return;
        clearTimeout(timer);
        emitter.off(name, on);
        resolve(args);
    };
    emitter.on(name, on);
});
