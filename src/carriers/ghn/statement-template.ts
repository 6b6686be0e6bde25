import type { StatementTemplate } from '../statement-layout.js';

/** GHN's COD statement as the product's template reads it (docs/payouts.md). */
export const GHN_STATEMENT_TEMPLATE: StatementTemplate = {
  columns: {
    batchId: ['Mã phiên COD', 'Mã phiên', 'batch_id'],
    batchDate: ['Ngày chuyển COD', 'Ngày chuyển tiền', 'batch_date'],
    orderCode: ['Mã đơn GHN', 'Mã đơn hàng', 'order_code'],
    lineKind: ['Loại giao dịch', 'line_kind'],
    codCollected: ['Tiền thu hộ', 'cod_collected'],
    debts: ['Công nợ', 'debts'],
    netPaid: ['Thực nhận', 'net_paid'],
    batchTotal: ['Tổng tiền phiên', 'batch_total'],
  },
  fees: {
    'Phí dịch vụ': 'shipping',
    'Phí khai giá': 'insurance',
    'Phí thu hộ': 'cod',
    'Phí hoàn hàng': 'return',
    'Phí giao lại': 'redelivery',
  },
};
