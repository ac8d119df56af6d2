'use strict';
// coldbrew's Node.js runtime shim: the `nodejs*` counterpart of a `provided` bootstrap.
// The supervisor runs `node <repo>/emulator/runtimes/node/bootstrap.cjs` in the function's
// code directory with the Lambda environment (spec §1.6); this file speaks the Runtime API
// (spec §1.1–1.4, [RTAPI][OAS]) and reproduces what AWS's Node.js runtime interface client
// (aws/aws-lambda-nodejs-runtime-interface-client, src/*.js as shipped with nodejs20.x)
// does with the user's code. Plain JS, Node 18+, no npm dependencies.
//
// Behaviour taken from that client (file names refer to its src/ folder):
//  - handler string `dir/file.a.b` → module `dir/file`, nested property `a.b`; `..` rejected;
//    lookup order extensionless, .js (CJS unless package.json says "type":"module"), .js as ESM,
//    .mjs, .cjs, then require.resolve (UserFunction.js).
//  - init errors Runtime.MalformedHandlerName ("Bad handler"), Runtime.ImportModuleError
//    (message = String(original error)), Runtime.UserCodeSyntaxError, Runtime.HandlerNotFound
//    ("<handler> is undefined or not exported" / "is not a function") — posted to
//    /runtime/init/error, then the process exits (index.mjs: 129 via uncaughtException).
//  - error body {errorType, errorMessage, trace[]} (Errors.js toRapidResponse); non-Error
//    values give errorType = typeof value ("string"), trace []. coldbrew also sends the same
//    lines as `stackTrace`, the field name of the OpenAPI ErrorRequest schema [OAS], so clients
//    reading either name work (AWS's Node runtime sends `trace` only).
//  - callback handlers wait for an empty event loop unless
//    context.callbackWaitsForEmptyEventLoop = false; async handlers do not; a handler that
//    never completes gets `null` (sync) or Runtime.NodeJsExit (async) once the loop drains
//    (CallbackContext.js, Runtime.js, BeforeExitListener.js).
//  - uncaught exception during an invoke → /error then exit(129); unhandled rejection →
//    Runtime.UnhandledPromiseRejection, /error, exit(128) (Runtime.js _setErrorCallbacks).
//  - console.* → `<ISO time>\t<request id>\t<LEVEL>\t<util.format(...)>` on stdout with
//    newlines turned into \r; AWS_LAMBDA_LOG_FORMAT=JSON and AWS_LAMBDA_LOG_LEVEL honoured
//    (LogPatch.js).
//  - context fields (InvokeContext.js); _X_AMZN_TRACE_ID set per invoke [RTAPI].
//  - awslambda.streamifyResponse: coldbrew's Runtime API buffers responses, so a streaming
//    handler's output is collected and posted once (spec §1.5 describes the real wire form);
//    an HttpResponseStream prelude becomes an ordinary proxy response object.

const fs = require('fs');
const path = require('path');
const util = require('util');
const { pathToFileURL } = require('url');

const API_PREFIX = '/2018-06-01/runtime';
const ERROR_TYPE_HEADER = 'Lambda-Runtime-Function-Error-Type';

// ---------------------------------------------------------------------------------------------
// Errors (Errors.js)

function defineRuntimeError(name) {
    const cls = class extends Error {};
    Object.defineProperty(cls, 'name', { value: name });
    // AWS sets the name on the prototype, so `err.name` is the Runtime.* type.
    cls.prototype.name = `Runtime.${name}`;
    return cls;
}
const ImportModuleError = defineRuntimeError('ImportModuleError');
const HandlerNotFound = defineRuntimeError('HandlerNotFound');
const MalformedHandlerName = defineRuntimeError('MalformedHandlerName');
const UserCodeSyntaxError = defineRuntimeError('UserCodeSyntaxError');
const MalformedStreamingHandler = defineRuntimeError('MalformedStreamingHandler');
// Message is String(reason), as AWS's `super(reason)`; reason and promise are kept on it.
const UnhandledPromiseRejection = defineRuntimeError('UnhandledPromiseRejection');
const NODEJS_EXIT_MESSAGE =
    'The Lambda runtime client detected an unexpected Node.js exit code. This is most commonly ' +
    'caused by a Promise that was never settled. For more information, see ' +
    'https://nodejs.org/docs/latest/api/process.html#exit-codes';
const NodeJsExit = defineRuntimeError('NodeJsExit');

function looksLikeError(obj) {
    return obj && typeof obj.name === 'string' && typeof obj.message === 'string' &&
        typeof obj.stack === 'string' && obj.name && obj.message && obj.stack;
}

// The body posted to /error and /init/error.
function toRapidResponse(error) {
    try {
        let body;
        if (util.types.isNativeError(error) || looksLikeError(error)) {
            body = {
                errorType: error.name,
                errorMessage: error.message,
                trace: typeof error.stack === 'string' ? error.stack.split('\n') : [],
            };
        } else {
            body = { errorType: typeof error, errorMessage: String(error), trace: [] };
        }
        body.stackTrace = body.trace;
        return body;
    } catch (_e) {
        return {
            errorType: 'handled',
            errorMessage: 'callback called with Error argument, but there was a problem while ' +
                'retrieving one or more of its message, name, and stack',
            trace: [],
            stackTrace: [],
        };
    }
}

function intoError(err) {
    return err instanceof Error ? err : new Error(err);
}

// The "\t{json}" AWS appends to "Invoke Error" / "Uncaught Exception" log lines (Errors.js).
function toFormatted(error) {
    const withEnumerable = (_k, v) => {
        if (!(v instanceof Error)) return v;
        const ret = Object.assign({ errorType: v.name, errorMessage: v.message, code: v.code }, v);
        if (typeof v.stack === 'string') ret.stack = v.stack.split('\n');
        return ret;
    };
    try {
        return '\t' + JSON.stringify(error, withEnumerable);
    } catch (_e) {
        const { stackTrace: _s, ...aws } = toRapidResponse(error);
        return '\t' + JSON.stringify(aws);
    }
}

// ---------------------------------------------------------------------------------------------
// Logging (LogPatch.js)

const LEVELS = Object.freeze({
    TRACE: { name: 'TRACE', priority: 1 },
    DEBUG: { name: 'DEBUG', priority: 2 },
    INFO: { name: 'INFO', priority: 3 },
    WARN: { name: 'WARN', priority: 4 },
    ERROR: { name: 'ERROR', priority: 5 },
    FATAL: { name: 'FATAL', priority: 6 },
});

// AWS keeps the id in a global symbol so other copies of the client can read it; until the
// first invoke it is undefined and prints as "undefined".
const REQUEST_ID_SYMBOL = Symbol.for('aws.lambda.runtime.requestId');
const currentRequestId = () => globalThis[REQUEST_ID_SYMBOL];
const setCurrentRequestId = (id) => { globalThis[REQUEST_ID_SYMBOL] = id; };

function jsonErrorReplacer(_k, value) {
    if (value instanceof Error) {
        return Object.assign({
            errorType: value?.constructor?.name ?? 'UnknownError',
            errorMessage: value.message,
            stackTrace: typeof value.stack === 'string' ? value.stack.split('\n') : value.stack,
        }, value);
    }
    return value;
}

function formatJsonLine(level, message, params) {
    const result = { timestamp: new Date().toISOString(), level: level.name, requestId: currentRequestId() };
    if (params.length === 0) {
        result.message = message;
        try {
            return JSON.stringify(result, jsonErrorReplacer);
        } catch (_e) {
            result.message = util.format(message);
            return JSON.stringify(result);
        }
    }
    result.message = util.format(message, ...params);
    for (const p of [message, ...params]) {
        if (p instanceof Error) {
            result.errorType = p?.constructor?.name ?? 'UnknownError';
            result.errorMessage = p.message;
            result.stackTrace = typeof p.stack === 'string' ? p.stack.split('\n') : [];
            break;
        }
    }
    return JSON.stringify(result);
}

const jsonLogs = (process.env.AWS_LAMBDA_LOG_FORMAT || '').toUpperCase() === 'JSON';

function writeLog(level, message, ...params) {
    let line = jsonLogs
        ? formatJsonLine(level, message, params)
        : `${new Date().toISOString()}\t${currentRequestId()}\t${level.name}\t${util.format(message, ...params)}`;
    // One log event per call, as in CloudWatch: embedded newlines become carriage returns.
    line = line.replace(/\n/g, '\r');
    // stdout is a pipe. A write the pipe cannot take at once (it is full) is queued by Node,
    // not blocked on: an invocation's outcome waits for such writes (whenOutputWritten).
    process.stdout.write(line + '\n');
}

// Calls `then` once stdout and stderr hold nothing unwritten, so what a handler wrote reaches
// coldbrew before its outcome does and lands before END. Node queues a write to a full pipe
// (a 64 KB line, a slow reader) rather than block; such a line used to be cut at END. Polled:
// 'drain' fires only after a write returned false. Nearly always nothing is pending.
function whenOutputWritten(then) {
    if (process.stdout.writableLength === 0 && process.stderr.writableLength === 0) return then();
    setTimeout(() => whenOutputWritten(then), 1);
}

function patchConsole() {
    const minLevel = LEVELS[(process.env.AWS_LAMBDA_LOG_LEVEL || '').toUpperCase()] ?? LEVELS.TRACE;
    const nop = () => {};
    const make = (level) => (level.priority >= minLevel.priority
        ? (msg, ...params) => writeLog(level, msg, ...params) : nop);
    console.trace = make(LEVELS.TRACE);
    console.debug = make(LEVELS.DEBUG);
    console.info = make(LEVELS.INFO);
    console.log = console.info;
    console.warn = make(LEVELS.WARN);
    console.error = make(LEVELS.ERROR);
    console.fatal = (msg, ...params) => writeLog(LEVELS.FATAL, msg, ...params);
}

function logError(label, err) {
    if (jsonLogs) console.error(intoError(err));
    else console.error(label, toFormatted(intoError(err)));
}

// ---------------------------------------------------------------------------------------------
// Runtime API client: one keep-alive connection, no timeout on /next [RTAPI], requests sent
// one at a time. HTTP/1.1 is written and read here on a plain socket rather than through
// http.request: the client-side machinery (agent, ClientRequest, IncomingMessage, header
// objects, stream events) cost more CPU than the handler itself for small invocations, and
// when many environments run at once each process runs that code too rarely for V8 to
// optimise it. The framing read is what the Runtime API answers with: Content-Length or
// chunked bodies, `Connection: close` honoured.

const net = require('net');

class RuntimeClient {
    constructor(hostPort) {
        const colon = hostPort.lastIndexOf(':');
        this.host = (colon > 0 ? hostPort.slice(0, colon) : hostPort).replace(/^\[(.*)\]$/, '$1');
        this.port = colon > 0 ? parseInt(hostPort.slice(colon + 1), 10) : 80;
        this.hostHeader = `Host: ${hostPort}\r\n`;
        this.socket = null;
        this.used = false;        // the socket has carried a response (a reused connection)
        this.buffer = null;       // bytes received and not yet consumed
        this.parts = [];          // while a large body arrives: its pieces so far,
        this.have = 0;            //   their length,
        this.want = 0;            //   and the length the whole response needs
        this.pending = null;      // { resolve, reject } of the request on the wire
        this.queue = [];          // requests waiting for the socket: [head, body, resolve, reject, retried]
    }

    connect() {
        const socket = net.connect({ host: this.host, port: this.port });
        socket.setNoDelay(true);
        this.socket = socket;
        this.used = false;
        this.buffer = null;
        this.parts = [];
        this.want = 0;
        socket.on('data', (chunk) => {
            if (this.want > 0) {
                // The rest of a large body: collected, joined once it is all there.
                this.parts.push(chunk);
                this.have += chunk.length;
                if (this.have < this.want) return;
                this.buffer = Buffer.concat(this.parts, this.have);
                this.parts = [];
                this.want = 0;
            } else {
                this.buffer = this.buffer ? Buffer.concat([this.buffer, chunk]) : chunk;
            }
            this.parse();
        });
        const lost = (err) => {
            if (this.socket !== socket) return;
            this.socket = null;
            const p = this.pending;
            this.pending = null;
            if (p) p.lost(err || Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
        };
        socket.on('error', lost);
        socket.on('close', () => lost(null));
    }

    // Parses one response from the buffer once it is whole.
    parse() {
        const p = this.pending;
        const buf = this.buffer;
        if (!p || !buf) return;
        const headEnd = buf.indexOf('\r\n\r\n');
        if (headEnd < 0) return;
        const lines = buf.toString('latin1', 0, headEnd).split('\r\n');
        const status = parseInt(lines[0].slice(9, 12), 10);
        const headers = {};
        for (let i = 1; i < lines.length; i++) {
            const c = lines[i].indexOf(':');
            if (c <= 0) continue;
            const name = lines[i].slice(0, c).trim().toLowerCase();
            const value = lines[i].slice(c + 1).trim();
            headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
        }
        let body;
        let rest;
        const start = headEnd + 4;
        if ((headers['transfer-encoding'] || '').toLowerCase().includes('chunked')) {
            const parts = [];
            let at = start;
            for (;;) {
                const eol = buf.indexOf('\r\n', at);
                if (eol < 0) return;
                const size = parseInt(buf.toString('latin1', at, eol), 16);
                if (Number.isNaN(size)) return this.fail(new Error('bad chunk size from the Runtime API'));
                if (size === 0) {
                    const end = buf.indexOf('\r\n\r\n', eol);
                    if (end < 0) return;
                    rest = end + 4;
                    break;
                }
                if (buf.length < eol + 2 + size + 2) return;
                parts.push(buf.subarray(eol + 2, eol + 2 + size));
                at = eol + 2 + size + 2;
            }
            body = Buffer.concat(parts);
        } else {
            const length = parseInt(headers['content-length'] || '0', 10) || 0;
            if (buf.length < start + length) {
                this.want = start + length;
                this.parts = [buf];
                this.have = buf.length;
                this.buffer = null;
                return;
            }
            body = buf.subarray(start, start + length);
            rest = start + length;
        }
        this.buffer = rest < buf.length ? buf.subarray(rest) : null;
        this.pending = null;
        this.used = true;
        if ((headers.connection || '').toLowerCase() === 'close') {
            const socket = this.socket;
            this.socket = null;
            if (socket) socket.destroy();
        }
        p.resolve({ status, headers, body });
        this.pump();
        // An idle connection must not keep the event loop alive: callback handlers wait for
        // it to drain (as http.Agent unrefs its free sockets).
        if (!this.pending && this.socket) this.socket.unref();
    }

    fail(err) {
        const socket = this.socket;
        this.socket = null;
        if (socket) socket.destroy();
        const p = this.pending;
        this.pending = null;
        if (p) p.reject(err);
        this.pump();
    }

    // Sends the next queued request when none is on the wire.
    pump() {
        if (this.pending || this.queue.length === 0) return;
        const [head, body, resolve, reject, retried] = this.queue.shift();
        if (!this.socket) this.connect();
        this.socket.ref();
        const reused = this.used;
        this.pending = {
            resolve,
            reject,
            // A kept-alive connection the server closed while idle fails on first use; the
            // request never reached the server, so sending it again is safe.
            lost: (err) => {
                if (!retried && reused && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) {
                    this.queue.unshift([head, body, resolve, reject, true]);
                } else {
                    reject(err);
                }
                this.pump();
            },
        };
        this.socket.write(head);
        if (body && body.length) this.socket.write(body);
    }

    request(method, urlPath, headers, body) {
        let head = `${method} ${urlPath} HTTP/1.1\r\n${this.hostHeader}`;
        for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
        head += '\r\n';
        return new Promise((resolve, reject) => {
            this.queue.push([head, body, resolve, reject, false]);
            this.pump();
        });
    }

    async next() {
        const res = await this.request('GET', `${API_PREFIX}/invocation/next`, {});
        if (res.status !== 200) {
            // 403/500 from /next mean "the runtime must exit" [OAS].
            throw new Error(`GET /invocation/next returned ${res.status}: ${res.body.toString('utf8')}`);
        }
        return { headers: res.headers, body: res.body.toString('utf8') };
    }

    post(urlPath, payload, contentType, extraHeaders) {
        const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload, 'utf8');
        return this.request('POST', urlPath, Object.assign({
            'Content-Type': contentType,
            'Content-Length': body.length,
        }, extraHeaders || {}), body);
    }

    postResponse(id, bodyString, contentType = 'application/json') {
        return this.post(`${API_PREFIX}/invocation/${encodeURIComponent(id)}/response`, bodyString, contentType);
    }

    postError(id, error) {
        const body = toRapidResponse(error);
        return this.post(`${API_PREFIX}/invocation/${encodeURIComponent(id)}/error`,
            JSON.stringify(body), 'application/json', { [ERROR_TYPE_HEADER]: headerSafe(body.errorType) });
    }

    postInitError(error) {
        const body = toRapidResponse(error);
        return this.post(`${API_PREFIX}/init/error`, JSON.stringify(body), 'application/json',
            { [ERROR_TYPE_HEADER]: headerSafe(body.errorType) });
    }
}

function headerSafe(s) {
    // Node refuses header values with control characters; an errorType is user-controlled.
    return String(s ?? 'Unknown').replace(/[^\t\x20-\x7e]/g, '_') || 'Unknown';
}

// JSON.stringify(undefined) is undefined: AWS posts `null` instead (RAPIDClient.js).
function serialize(result) {
    try {
        return JSON.stringify(result === undefined ? null : result);
    } catch (_e) {
        throw new Error('Unable to stringify response body');
    }
}

// ---------------------------------------------------------------------------------------------
// Loading the user's handler (UserFunction.js)

const HANDLER_STREAMING = Symbol.for('aws.lambda.runtime.handler.streaming');
const HANDLER_HIGHWATERMARK = Symbol.for('aws.lambda.runtime.handler.streaming.highWaterMark');
const HTTP_INTEGRATION_CONTENT_TYPE = 'application/vnd.awslambda.http-integration-response';

function installAwslambdaGlobal() {
    const flag = process.env.AWS_LAMBDA_NODEJS_NO_GLOBAL_AWSLAMBDA;
    if (flag === '1' || flag === 'true') return;
    globalThis.awslambda = {
        streamifyResponse(handler, options) {
            handler[HANDLER_STREAMING] = 'response';
            if (typeof options?.highWaterMark === 'number') handler[HANDLER_HIGHWATERMARK] = options.highWaterMark;
            return handler;
        },
        HttpResponseStream: {
            // Same bytes as AWS's HttpResponseStream.from: JSON prelude, 8 NUL bytes, body (spec §1.5).
            from(stream, prelude) {
                stream.setContentType(HTTP_INTEGRATION_CONTENT_TYPE);
                stream.write(JSON.stringify(prelude));
                stream.write(Buffer.alloc(8));
                return stream;
            },
        },
    };
}

function hasTypeModule(folder) {
    // Nearest package.json decides; node_modules or / ends the search.
    for (;;) {
        if (folder.endsWith('/node_modules')) return false;
        const pj = path.join(folder, 'package.json');
        if (fs.existsSync(pj)) {
            try {
                return JSON.parse(fs.readFileSync(pj, 'utf8'))?.type === 'module';
            } catch (e) {
                console.warn(`${pj} cannot be read, it will be ignored for ES module detection purposes.`, e);
                return false;
            }
        }
        const parent = path.dirname(folder);
        if (parent === folder) return false;
        folder = parent;
    }
}

function tryRequire(file) {
    return fs.existsSync(file) ? require(file) : undefined;
}

async function tryImport(file) {
    return fs.existsSync(file) ? import(pathToFileURL(file).href) : undefined;
}

async function loadModule(appRoot, moduleRoot, moduleName) {
    const full = path.resolve(appRoot, moduleRoot, moduleName);
    const extensionless = tryRequire(full);
    if (extensionless) return extensionless;
    const esm = hasTypeModule(path.dirname(full));
    if (!esm) {
        const cjs = tryRequire(full + '.js');
        if (cjs) return cjs;
    }
    const loaded = (esm && (await tryImport(full + '.js'))) ||
        (await tryImport(full + '.mjs')) ||
        tryRequire(full + '.cjs');
    if (loaded) return loaded;
    // Last resort, a bare module name such as a package in node_modules.
    return require(require.resolve(moduleName, { paths: [appRoot, path.join(appRoot, moduleRoot)] }));
}

async function loadHandler(appRoot, fullHandler) {
    if (fullHandler.includes('..')) {
        throw new MalformedHandlerName(`'${fullHandler}' is not a valid handler name. Use absolute paths when specifying root directories in handler names.`);
    }
    const moduleAndHandler = path.basename(fullHandler);
    const moduleRoot = fullHandler.substring(0, fullHandler.indexOf(moduleAndHandler));
    const match = moduleAndHandler.match(/^([^.]*)\.(.*)$/);
    if (!match) throw new MalformedHandlerName('Bad handler');
    const [, moduleName, handlerPath] = match;

    let userModule;
    try {
        userModule = await loadModule(appRoot, moduleRoot, moduleName);
    } catch (e) {
        if (e instanceof SyntaxError) {
            const wrapped = new UserCodeSyntaxError(String(e));
            wrapped.stack = e.stack;
            throw wrapped;
        }
        // ERR_MODULE_NOT_FOUND is the ESM spelling (an .mjs importing a missing package);
        // AWS reports both as Runtime.ImportModuleError.
        if (e && (e.code === 'MODULE_NOT_FOUND' || e.code === 'ERR_MODULE_NOT_FOUND')) {
            throw new ImportModuleError(String(e));
        }
        throw e;
    }
    const fn = handlerPath.split('.').reduce((obj, key) => obj && obj[key], userModule);
    if (!fn) throw new HandlerNotFound(`${fullHandler} is undefined or not exported`);
    if (typeof fn !== 'function') throw new HandlerNotFound(`${fullHandler} is not a function`);
    const streaming = fn[HANDLER_STREAMING];
    if (streaming && streaming !== 'response') throw new MalformedStreamingHandler('Only response streaming is supported.');
    return fn;
}

// ---------------------------------------------------------------------------------------------
// Invocation

// One slot, replaced per invocation: what to do when the event loop drains (BeforeExitListener.js).
let beforeExitAction = null;
process.on('beforeExit', () => {
    const action = beforeExitAction;
    beforeExitAction = null;
    if (action) action();
});

const isPromise = (v) => v && typeof v.then === 'function';

// Bytes from the streaming stand-in, posted as they are rather than JSON-encoded.
class RawBody {
    constructor(bytes, contentType) {
        this.bytes = bytes;
        this.contentType = contentType;
    }
}

function parseJsonHeader(value, name) {
    if (value === undefined) return undefined;
    try {
        return JSON.parse(value);
    } catch (err) {
        throw new Error(`Cannot parse ${name} as json: ${err.toString()}`);
    }
}

class Runtime {
    constructor(client, handler) {
        this.client = client;
        this.handler = handler;
        this.isAsync = handler.constructor?.name === 'AsyncFunction';
        this.streaming = handler[HANDLER_STREAMING] === 'response';
        // Replaced per invocation so a crash is reported against the request that caused it.
        this.onUncaught = null;
    }

    async run() {
        for (;;) {
            let invocation;
            try {
                invocation = await this.client.next();
            } catch (err) {
                process.stderr.write(`coldbrew node runtime: ${err.message}\n`);
                process.exit(1);
            }
            await new Promise((done) => this.invoke(invocation, done));
        }
    }

    // Calls the handler; `done` runs once the outcome has been posted.
    invoke({ headers, body }, done) {
        const id = headers['lambda-runtime-aws-request-id'];
        setCurrentRequestId(id);
        const trace = headers['lambda-runtime-trace-id'];
        if (trace) process.env._X_AMZN_TRACE_ID = trace;
        else delete process.env._X_AMZN_TRACE_ID;

        this.onUncaught = (error, exitCode) => {
            this.client.postError(id, error).finally(() => process.exit(exitCode));
        };

        let posted = false;
        const post = (ok, value) => {
            if (posted) {
                console.error('Invocation has already been reported as done. Cannot call complete more than once per invocation.');
                return;
            }
            posted = true;
            beforeExitAction = null;
            // The outcome is settled (and an error logged) now, and sent once the output is out.
            let send;
            if (ok && value instanceof RawBody) {
                send = () => this.client.postResponse(id, value.bytes, value.contentType);
            } else if (ok) {
                let payload;
                try {
                    payload = serialize(value);
                    send = () => this.client.postResponse(id, payload);
                } catch (err) {
                    logError('Invoke Error', err);
                    send = () => this.client.postError(id, err);
                }
            } else {
                logError('Invoke Error', value);
                send = () => this.client.postError(id, value);
            }
            whenOutputWritten(() => send().then(() => setImmediate(done), (err) => {
                process.stderr.write(`coldbrew node runtime: posting the outcome failed: ${err.message}\n`);
                process.exit(1);
            }));
        };

        // First call wins among callback / succeed / fail / done (CallbackContext.js).
        let finished = false;
        const once = (fn) => (...args) => {
            if (finished) return;
            finished = true;
            fn(...args);
        };
        let waitForEmptyEventLoop = true;
        const fail = (err) => post(false, err);
        const complete = (err, result) => {
            beforeExitAction = null;
            if (err !== undefined && err !== null) fail(err);
            else post(true, result);
        };
        const callback = once((err, result) => {
            beforeExitAction = null;
            if (err !== undefined && err !== null) fail(err);
            else if (!waitForEmptyEventLoop) post(true, result);
            // AWS's default: the result goes out only when nothing else is left to run.
            else beforeExitAction = () => setImmediate(() => post(true, result));
        });
        const context = {
            get callbackWaitsForEmptyEventLoop() { return waitForEmptyEventLoop; },
            set callbackWaitsForEmptyEventLoop(v) { waitForEmptyEventLoop = v; },
            succeed: once((result) => complete(null, result)),
            fail: once((err) => complete(err === undefined || err === null ? 'handled' : err, null)),
            done: once((err, result) => complete(err, result)),
        };

        // Neither callback nor promise settled and the loop drained (Runtime.js).
        beforeExitAction = () => {
            finished = true;
            if (this.isAsync) post(false, new NodeJsExit(NODEJS_EXIT_MESSAGE));
            else post(true, null);
        };

        try {
            const deadlineMs = Number(headers['lambda-runtime-deadline-ms']);
            Object.assign(context, {
                functionVersion: process.env.AWS_LAMBDA_FUNCTION_VERSION,
                functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
                memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
                logGroupName: process.env.AWS_LAMBDA_LOG_GROUP_NAME,
                logStreamName: process.env.AWS_LAMBDA_LOG_STREAM_NAME,
                clientContext: parseJsonHeader(headers['lambda-runtime-client-context'], 'ClientContext'),
                identity: parseJsonHeader(headers['lambda-runtime-cognito-identity'], 'CognitoIdentity'),
                invokedFunctionArn: headers['lambda-runtime-invoked-function-arn'],
                awsRequestId: id,
                tenantId: headers['lambda-runtime-aws-tenant-id'],
                getRemainingTimeInMillis: () => deadlineMs - Date.now(),
            });
            const event = JSON.parse(body);
            if (this.streaming) {
                this.invokeStreaming(event, context, post);
                return;
            }
            const result = this.handler(event, context, callback);
            if (isPromise(result)) {
                result.then(context.succeed, context.fail).catch(context.fail);
            }
        } catch (err) {
            callback(err);
        }
    }

    // Buffered stand-in for response streaming: collect, then post once.
    invokeStreaming(event, context, post) {
        const { Writable } = require('stream');
        const chunks = [];
        let contentType = 'application/octet-stream';
        const stream = new Writable({
            write(chunk, encoding, cb) {
                chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, encoding));
                cb();
            },
        });
        stream.setContentType = (type) => { contentType = type; };
        beforeExitAction = null;
        const finish = () => {
            const bytes = Buffer.concat(chunks);
            if (contentType === HTTP_INTEGRATION_CONTENT_TYPE) {
                const sep = bytes.indexOf(Buffer.alloc(8));
                const prelude = sep >= 0 ? JSON.parse(bytes.subarray(0, sep).toString('utf8')) : {};
                const rest = sep >= 0 ? bytes.subarray(sep + 8) : bytes;
                const text = rest.toString('utf8');
                const binary = !Buffer.from(text, 'utf8').equals(rest);
                post(true, Object.assign({}, prelude, {
                    body: binary ? rest.toString('base64') : text,
                    isBase64Encoded: binary,
                }));
            } else {
                post(true, new RawBody(bytes, contentType));
            }
        };
        let result;
        try {
            result = this.handler(event, stream, context);
        } catch (err) {
            post(false, err);
            return;
        }
        if (!isPromise(result)) {
            post(false, new Error('Streaming does not support non-async handlers.'));
            return;
        }
        // AWS awaits the response request itself, i.e. the stream's end, before moving on.
        const ended = new Promise((resolve, reject) => {
            if (stream.writableFinished) resolve();
            stream.once('finish', resolve);
            stream.once('error', reject);
        });
        Promise.all([result, ended]).then(finish, (err) => post(false, err));
    }
}

// ---------------------------------------------------------------------------------------------
// Start-up (index.mjs)

async function main() {
    patchConsole();
    if (!process.env.AWS_LAMBDA_RUNTIME_API) {
        process.stderr.write('coldbrew node runtime: AWS_LAMBDA_RUNTIME_API is not set\n');
        process.exit(1);
    }
    const client = new RuntimeClient(process.env.AWS_LAMBDA_RUNTIME_API);
    let runtime = null;

    // During init a crash is an init error; once invoking, it belongs to the current request.
    process.on('uncaughtException', (error) => {
        logError('Uncaught Exception', error);
        if (runtime && runtime.onUncaught) runtime.onUncaught(error, 129);
        else client.postInitError(error).finally(() => process.exit(129));
    });
    process.on('unhandledRejection', (reason, promise) => {
        const error = new UnhandledPromiseRejection(String(reason));
        error.reason = reason;
        error.promise = promise;
        logError('Unhandled Promise Rejection', error);
        if (runtime && runtime.onUncaught) runtime.onUncaught(error, 128);
        else client.postInitError(error).finally(() => process.exit(128));
    });

    installAwslambdaGlobal();
    const taskRoot = process.env.LAMBDA_TASK_ROOT || process.cwd();
    const handler = await loadHandler(taskRoot, process.env._HANDLER || '');
    runtime = new Runtime(client, handler);
    await runtime.run();
}

main().catch((err) => {
    // Load failures land here. AWS lets them reach its uncaughtException hook, which logs
    // "Uncaught Exception", posts /init/error and exits 129; do the same.
    logError('Uncaught Exception', err);
    const client = new RuntimeClient(process.env.AWS_LAMBDA_RUNTIME_API);
    client.postInitError(err).finally(() => process.exit(129));
});
