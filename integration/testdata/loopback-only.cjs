'use strict';
// A `node --require` preload that keeps a server on loopback: every TCP
// listen() binds 127.0.0.1, whatever host (or none) the program asked for.
// Pipe paths, handles and file descriptors are passed through unchanged.
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const [first] = args;
  if (first !== null && typeof first === 'object' && first.port !== undefined) {
    return listen.call(this, { ...first, host: '127.0.0.1' }, ...args.slice(1));
  }
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    const cb = typeof args[args.length - 1] === 'function' ? [args[args.length - 1]] : [];
    return listen.call(this, { port: Number(first), host: '127.0.0.1' }, ...cb);
  }
  return listen.apply(this, args);
};
