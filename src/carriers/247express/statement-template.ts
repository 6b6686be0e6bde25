import type { StatementTemplate } from '../statement-layout.js';

/** 247Express's payout statement as the product's template reads it (docs/payouts.md). */
export const EXPRESS_STATEMENT_TEMPLATE: StatementTemplate = {
  columns: {
    batchId: ['Mã phiên', 'Mã bảng kê', 'batch_id'],
    batchDate: ['Ngày thanh toán', 'Ngày chuyển tiền', 'batch_date'],
    orderCode: ['Mã vận đơn', 'Mã đơn hàng', 'order_code'],
    lineKind: ['Loại dòng', 'line_kind'],
    codCollected: ['Tiền thu hộ', 'Tiền COD', 'cod_collected'],
    debts: ['Công nợ trừ', 'Công nợ', 'debts'],
    netPaid: ['Thực trả', 'Thực nhận', 'net_paid'],
    batchTotal: ['Tổng phiên', 'batch_total'],
  },
  fees: {
    'Cước chính': 'shipping',
    'Phí vùng xa': 'remote_area',
    'Phụ phí xăng dầu': 'fuel',
    VAT: 'vat',
    'Phí thu hộ': 'cod',
  },
};
