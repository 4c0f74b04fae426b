# frozen_string_literal: true

require "webrick"

module Details
  # What one request may cost; Server builds it from the settings.
  #   header_timeout: seconds from a head's first byte (from the accept, for
  #     a connection's first request) until its blank line
  #   body_timeout: seconds from the end of the head until the end of the body
  #   max_body_bytes: a larger Content-Length is 413, larger chunks 400
  RequestLimits = Struct.new(:header_timeout, :body_timeout, :max_body_bytes, keyword_init: true)

  # WEBrick's HTTPRequest with stricter framing. HTTPServer#create_request
  # (documented as overridable) hands WEBrick this class; HTTPRequest#parse,
  # public, still does all the parsing, but reads from a StrictReader
  # wrapped around the socket instead of the socket itself. The reader holds
  # the head to an overall deadline and rejects, before WEBrick sees them,
  # the lines WEBrick would misread (a header line cut at its 4096-byte read
  # limit, bare LF, obs-fold, control characters, malformed chunk lines).
  # After WEBrick has parsed the head, #parse checks what RFC 9112 makes a
  # 400: Host, Content-Length and Transfer-Encoding. Every rejection is a
  # WEBrick::HTTPStatus error raised inside parse, so WEBrick answers it
  # itself (JSON through Server#create_response) with "Connection: close"
  # and closes the connection.
  class StrictRequest < WEBrick::HTTPRequest
    # Thread-local set by Server's AcceptCallback: when the first head of a
    # connection must be complete (accept time + header timeout).
    FIRST_HEAD_DEADLINE = :details_first_head_deadline

    # RFC 3986 host (IP-literal or reg-name, whose sub-delims include ",")
    # and an optional port.
    HOST = /\A(?:\[[0-9A-Fa-f:.]+\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)(?::[0-9]*)?\z/
    DIGITS = /\A[0-9]+\z/
    CHUNKED = /\Achunked\z/i

    def initialize(webrick_config, limits)
      super(webrick_config)
      @details_limits = limits
      @details_reader = nil
    end

    # WEBrick calls this with the connection's socket.
    def parse(socket = nil)
      return super if socket.nil?

      @details_reader = StrictReader.new(socket, head_deadline, @details_limits.max_body_bytes)
      super(@details_reader)
      check_head
      @details_reader.expect_body(body_kind, StrictReader.now + @details_limits.body_timeout)
    end

    private

    def head_deadline
      deadline = StrictReader.now + @details_limits.header_timeout
      first = Thread.current[FIRST_HEAD_DEADLINE]
      return deadline unless first

      Thread.current[FIRST_HEAD_DEADLINE] = nil
      [first, deadline].min
    end

    # RFC 9112 sections 3.2 and 6: the request line, Host, and one
    # unambiguous framing of the body.
    def check_head
      problem = @details_reader.request_line_problem
      bad(problem) if problem
      bad("request line without an HTTP version") if http_version.major < 1

      check_host(header["host"])
      close_if_asked
      lengths = header["content-length"]
      codings = header["transfer-encoding"]
      unless codings.empty?
        bad("Transfer-Encoding and Content-Length together") unless lengths.empty?
        bad("Transfer-Encoding in an HTTP/1.0 request") if http_version < "1.1"
        bad("Transfer-Encoding other than chunked") unless codings.size == 1 && CHUNKED.match?(codings[0])
      end
      return if lengths.empty?

      bad("more than one Content-Length") if lengths.size > 1
      bad("Content-Length not a decimal number") unless DIGITS.match?(lengths[0])
      return if lengths[0].to_i <= @details_limits.max_body_bytes

      raise WEBrick::HTTPStatus::RequestEntityTooLarge, "request body over #{@details_limits.max_body_bytes} bytes"
    end

    def check_host(hosts)
      bad("more than one Host") if hosts.size > 1
      bad("HTTP/1.1 request without Host") if hosts.empty? && http_version >= "1.1"
      bad("invalid Host") if hosts.size == 1 && !HOST.match?(hosts[0])
    end

    # RFC 9112 9.6: "close" among the options of any Connection field ends
    # the connection after this answer. WEBrick only looks for the whole
    # value "close" (or "keep-alive"), in the fields joined by ", ", so
    # "keep-alive, close", or two Connection fields, kept the connection
    # and served a request pipelined behind.
    def close_if_asked
      options = header["connection"].flat_map { |value| value.split(",") }
      @keep_alive = false if options.any? { |option| option.strip.casecmp?("close") }
    end

    def body_kind
      return :none if header.nil?
      return :chunked unless header["transfer-encoding"].empty?
      return :length unless header["content-length"].empty?

      :none
    end

    def bad(message)
      raise WEBrick::HTTPStatus::BadRequest, message
    end
  end

  # The socket as StrictRequest hands it to HTTPRequest#parse: the calls
  # WEBrick makes on its socket (gets, read, eof?, <<, peeraddr, addr), each
  # checked against what may come next on the wire. Reads use public IO
  # calls only: read_nonblock (which takes the socket's buffered bytes
  # first) and wait_readable against a deadline. The head is read into a
  # buffer of its own, usually in one read, and what follows it is put
  # back with ungetbyte once the head is done (a pipelined next request
  # then waits in the socket's buffer for WEBrick's next round); body lines
  # put back what follows each of them.
  class StrictReader
    LF = "\n"
    CRLF = "\r\n"
    # How much of the head one read takes.
    HEAD_READ = 8192
    # A control other than HTAB inside a line that ends with CRLF (NUL, CR,
    # VT, ESC, DEL...); the final CR and LF do not count.
    CTL = /[\x00-\x08\x0a-\x1f\x7f](?!\n?\z)/
    TOKEN = '[!\#$%&\'*+\-.^_`|~0-9A-Za-z]+'
    # method SP request-target [SP HTTP-version] CRLF; without a version it
    # is HTTP/0.9, which Server#service answers as HTTP/1.0.
    REQUEST_LINE = %r{\A#{TOKEN} [^\x00-\x20\x7f]+(?: HTTP/[0-9]\.[0-9])?\r\n\z}
    QUOTED = '"(?:[\t !#-\[\]-~]|\\\\[\t -~])*"'
    # chunk-size [chunk-ext] CRLF, RFC 9112 section 7.1; at most 16 hex
    # digits (the body limit is far below that anyway).
    CHUNK_SIZE = /\A([0-9A-Fa-f]{1,16})(?:[ \t]*;[ \t]*#{TOKEN}(?:[ \t]*=[ \t]*(?:#{TOKEN}|#{QUOTED}))?)*\r\n\z/
    # Fields a trailer may not carry (RFC 9110 section 6.5.1).
    FORBIDDEN_TRAILER = /\A(?:content-length|transfer-encoding|host)[ \t]*:/i
    # The state after the head, by the body StrictRequest found.
    BODY_STATE = { none: :no_body, length: :length, chunked: :chunk_size }.freeze

    def self.now
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end

    # Why the request line is unacceptable, or nil.
    attr_reader :request_line_problem

    def initialize(io, head_deadline, max_body_bytes)
      @io = io
      @deadline = head_deadline
      @max_body_bytes = max_body_bytes
      @state = :request_line
      @request_line_problem = nil
      @body_bytes = 0
      @chunk_left = 0
      @head = "".b # head bytes read, from @head_at on not yet handed out
      @head_at = 0
    end

    # Called once the head is parsed and checked: what the body is. Bytes
    # read past the head go back to the socket.
    def expect_body(kind, deadline)
      @io.ungetbyte(@head.byteslice(@head_at, @head.bytesize - @head_at)) if @head_at < @head.bytesize
      @head = nil
      @deadline = deadline
      @state = BODY_STATE.fetch(kind)
    end

    # WEBrick reads every line of the head, chunk sizes, the CRLF after
    # chunk data and trailers with gets(LF, limit).
    def gets(_separator = LF, limit = 4096)
      case @state
      when :request_line then request_line(limit)
      when :head
        bad(@request_line_problem) if @request_line_problem
        field_line(head_line(limit), limit, :head_done)
      when :chunk_size then chunk_size_line(limit)
      when :chunk_end then chunk_end_line(limit)
      when :trailer then field_line(read_line(limit), limit, :done)
      else bad("unexpected read of a line")
      end
    end

    # WEBrick reads a Content-Length body and chunk data with read(size).
    def read(size)
      case @state
      when :length then read_bytes(size)
      when :chunk_data
        bad("chunk data read past its size") if size > @chunk_left
        data = read_bytes(size)
        @chunk_left -= data.bytesize if data
        @state = :chunk_end if @chunk_left.zero?
        data
      else bad("unexpected read of body bytes")
      end
    end

    def eof?
      @io.eof?
    rescue SystemCallError, IOError
      true
    end

    def <<(data)
      @io << data
      self
    end

    def peeraddr(*args)
      @io.peeraddr(*args)
    end

    def addr(*args)
      @io.addr(*args)
    end

    private

    def request_line(limit)
      line = head_line(limit)
      @state = :head
      # A line WEBrick cannot use (cut at its limit, cut by EOF) it rejects
      # itself with 414 or 400; anything else not in the grammar is refused
      # at the next read (or by StrictRequest#check_head for HTTP/0.9), once
      # WEBrick has taken the request line and can answer.
      @request_line_problem = "malformed request line" if line && !REQUEST_LINE.match?(line)
      line
    end

    # A header or trailer field line, or the blank line that ends them.
    def field_line(line, limit, state_after)
      bad("request ended before the blank line ending its head") if line.nil?
      unless line.end_with?(LF)
        bad("header line over #{limit - 2} bytes") if line.bytesize >= limit
        bad("request ended before the blank line ending its head")
      end
      bad("line not ended by CRLF") unless line.end_with?(CRLF)
      if line == CRLF
        @state = state_after
        return line
      end
      bad("obs-fold (a line starting with white space)") if line.start_with?(" ", "\t")
      bad("control character in a header line") if CTL.match?(line)
      bad("framing field in a trailer") if state_after == :done && FORBIDDEN_TRAILER.match?(line)
      line
    end

    def chunk_size_line(limit)
      line = read_line(limit)
      match = line && CHUNK_SIZE.match(line)
      bad("malformed chunk size line") unless match
      size = match[1].to_i(16)
      @body_bytes += size
      bad("chunked body over #{@max_body_bytes} bytes") if @body_bytes > @max_body_bytes
      @chunk_left = size
      @state = size.zero? ? :trailer : :chunk_data
      line
    end

    def chunk_end_line(limit)
      line = read_line(limit)
      bad("chunk data not followed by CRLF") unless line == CRLF
      @state = :chunk_size
      line
    end

    # IO#gets(LF, limit) for the head, from its buffer: the line with its
    # LF, or limit bytes without one, or what came before EOF (nil for
    # nothing).
    def head_line(limit)
      loop do
        at = @head.index(LF, @head_at)
        return take_head(at + 1 - @head_at) if at && at - @head_at < limit

        left = @head.bytesize - @head_at
        return take_head(limit) if left >= limit
        next if fill_head

        return left.zero? ? nil : take_head(left)
      end
    end

    def take_head(size)
      line = @head.byteslice(@head_at, size)
      @head_at += size
      line
    end

    # One more read into the head buffer, against the deadline; false at
    # EOF.
    def fill_head
      # Into one buffer: a new 8 KiB string per read, shrunk to the bytes
      # read, left the heap fragmented after floods of slow heads.
      chunk = @io.read_nonblock(HEAD_READ, @read_buffer ||= "".b, exception: false)
      return false if chunk.nil?

      if chunk == :wait_readable
        wait
        return true
      end

      if @head_at.positive?
        @head = @head.byteslice(@head_at, @head.bytesize - @head_at)
        @head_at = 0
      end
      @head << chunk
      true
    rescue Errno::ECONNRESET, Errno::EPIPE, Errno::ETIMEDOUT
      false
    end

    # IO#gets(LF, limit) against the deadline, for lines of the body: what
    # follows the line goes back to the socket.
    def read_line(limit)
      line = "".b
      loop do
        chunk = @io.read_nonblock(limit - line.bytesize, exception: false)
        case chunk
        when :wait_readable then wait
        when nil then return line.empty? ? nil : line
        else
          if (at = chunk.index(LF))
            line << chunk.byteslice(0, at + 1)
            @io.ungetbyte(chunk.byteslice(at + 1, chunk.bytesize)) if at + 1 < chunk.bytesize
            return line
          end
          line << chunk
          return line if line.bytesize >= limit
        end
      end
    rescue Errno::ECONNRESET, Errno::EPIPE, Errno::ETIMEDOUT
      line.empty? ? nil : line
    end

    # IO#read(size) against the deadline: size bytes, fewer at EOF, nil
    # for none.
    def read_bytes(size)
      data = "".b
      while data.bytesize < size
        chunk = @io.read_nonblock(size - data.bytesize, exception: false)
        case chunk
        when :wait_readable then wait
        when nil then break
        else data << chunk
        end
      end
      data.empty? && size.positive? ? nil : data
    rescue Errno::ECONNRESET, Errno::EPIPE, Errno::ETIMEDOUT
      data.empty? ? nil : data
    end

    def wait
      left = @deadline - self.class.now
      return if left.positive? && @io.wait_readable(left)

      raise WEBrick::HTTPStatus::RequestTimeout, "request not complete in time"
    end

    def bad(message)
      raise WEBrick::HTTPStatus::BadRequest, message
    end
  end
end
